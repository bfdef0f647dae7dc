import Slots
import VaultRules

/// A refusal as it crosses the gate protocol: the error the gate met, so the CLI reports it in the same
/// words and with the same exit code as when it met it itself. Payload: fields joined by U+001F, the first
/// naming the case; every field is cleaned of control characters. The subset the gate can meet; anything
/// else arrives as `refused` with its text.
public enum GateRefusal {
    static let separator: Character = "\u{1F}"

    public static func encode(_ error: VaultError) -> String {
        let fields: [String]
        switch error {
        case .slot(let e): fields = ["slot"] + encode(e)
        case .authenticationFailed(let m): fields = ["authentication-failed", m]
        case .notAuthenticated(let m): fields = ["not-authenticated", m]
        case .accountRefused(let m): fields = ["account-refused", m]
        case .authenticationUnavailable(let m): fields = ["authentication-unavailable", m]
        case .refused(let m): fields = ["refused", m]
        case .badInput(let m): fields = ["bad-input", m]
        case .busy(let after): fields = ["busy", "\(after)"]
        case .authenticationTimedOut(let seconds): fields = ["timed-out", seconds.map { "\($0)" } ?? "-"]
        case .lockHeld(let path, _, let seconds): fields = ["lock-held", path, "\(seconds)"]
        case .configuration(let path, let detail): fields = ["configuration", path, detail]
        case .blocked(let until, let now): fields = ["blocked", "\(until)", "\(now)"]
        case .authenticationFailedAndBlocked(let m, let until): fields = ["failed-and-blocked", m, "\(until)"]
        case .vaultLocked: fields = ["vault-locked"]
        case .auditUnwritable: fields = ["audit-unwritable"]
        case .changedMeanwhile(let n): fields = ["changed-meanwhile", n.rawValue]
        default: fields = ["refused", "vaultctl-gate refused the request (\(error))"]
        }
        return fields.map(clean).joined(separator: String(separator))
    }

    static func encode(_ e: SlotError) -> [String] {
        switch e {
        case .empty(let n): return ["empty", n.rawValue]
        case .badSecretSize(let n): return ["bad-size", "\(n)"]
        case .foreignMachine(let p): return ["foreign-machine", p]
        case .wrongSlot(let p, let b): return ["wrong-slot", p, b]
        case .tampered(let p, let d): return ["tampered", p, d]
        case .unsafePermissions(let p, let d): return ["unsafe-permissions", p, d]
        case .serviceUnavailable(let m): return ["service-unavailable", m]
        case .locked(let m): return ["locked", m]
        case .promptUnanswered(let m): return ["prompt-unanswered", m]
        case .tpmUnavailable(let p, let d): return ["tpm-unavailable", p, d]
        case .tpmCannotSeal(let d): return ["tpm-cannot-seal", d]
        case .noTPMToSeal(let d): return ["no-tpm-to-seal", d]
        case .gateHasNoTPM: return ["gate-has-no-tpm"]
        case .tpmForeign(let p): return ["tpm-foreign", p]
        case .tpmLockout(let s): return ["tpm-lockout", s.map { "\($0)" } ?? "-"]
        case .tpmHelperMissing(let p): return ["tpm-helper-missing", p]
        case .gateUnavailable(let m): return ["gate-unavailable", m]
        case .io(let p, let n, let op): return ["io", p, "\(n)", op]
        }
    }

    /// The error a refusal's payload names; nil when it is not one of this protocol.
    public static func decode(_ text: String) -> VaultError? {
        let f = text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        guard let kind = f.first else { return nil }
        let n = f.count
        switch (kind, n) {
        case ("slot", _): return decodeSlot(Array(f.dropFirst())).map { .slot($0) }
        case ("authentication-failed", 2): return .authenticationFailed(f[1])
        case ("not-authenticated", 2): return .notAuthenticated(f[1])
        case ("account-refused", 2): return .accountRefused(f[1])
        case ("authentication-unavailable", 2): return .authenticationUnavailable(f[1])
        case ("refused", 2): return .refused(f[1])
        case ("bad-input", 2): return .badInput(f[1])
        case ("busy", 2): return Double(f[1]).map { .busy(retryAfter: $0) }
        case ("timed-out", 2): return .authenticationTimedOut(seconds: Int(f[1]))
        case ("lock-held", 3): return Int(f[2]).map { .lockHeld(path: f[1], holder: nil, seconds: $0) }
        case ("configuration", 3): return .configuration(path: f[1], detail: f[2])
        case ("blocked", 3):
            guard let until = Double(f[1]), let now = Double(f[2]) else { return nil }
            return .blocked(until: until, now: now)
        case ("failed-and-blocked", 3): return Double(f[2]).map { .authenticationFailedAndBlocked(f[1], until: $0) }
        case ("vault-locked", 1): return .vaultLocked
        case ("audit-unwritable", 1): return .auditUnwritable
        case ("changed-meanwhile", 2): return SlotName(f[1]).map { .changedMeanwhile($0) }
        default: return nil
        }
    }

    static func decodeSlot(_ f: [String]) -> SlotError? {
        guard let kind = f.first else { return nil }
        switch (kind, f.count) {
        case ("empty", 2): return SlotName(f[1]).map { .empty($0) }
        case ("bad-size", 2): return Int(f[1]).map { .badSecretSize($0) }
        case ("foreign-machine", 2): return .foreignMachine(path: f[1])
        case ("wrong-slot", 3): return .wrongSlot(path: f[1], belongsTo: f[2])
        case ("tampered", 3): return .tampered(path: f[1], detail: f[2])
        case ("unsafe-permissions", 3): return .unsafePermissions(path: f[1], detail: f[2])
        case ("service-unavailable", 2): return .serviceUnavailable(f[1])
        case ("locked", 2): return .locked(f[1])
        case ("prompt-unanswered", 2): return .promptUnanswered(f[1])
        case ("tpm-unavailable", 3): return .tpmUnavailable(path: f[1], detail: f[2])
        case ("tpm-cannot-seal", 2): return .tpmCannotSeal(detail: f[1])
        case ("no-tpm-to-seal", 2): return .noTPMToSeal(detail: f[1])
        case ("gate-has-no-tpm", 1): return .gateHasNoTPM
        case ("tpm-foreign", 2): return .tpmForeign(path: f[1])
        case ("tpm-lockout", 2): return .tpmLockout(seconds: f[1] == "-" ? nil : UInt32(f[1]))
        case ("tpm-helper-missing", 2): return .tpmHelperMissing(path: f[1])
        case ("gate-unavailable", 2): return .gateUnavailable(f[1])
        case ("io", 4): return Int32(f[2]).map { .io(path: f[1], errno: $0, operation: f[3]) }
        default: return nil
        }
    }

    /// One field: control characters (the separator among them) become spaces, at most 1024 bytes.
    static func clean(_ text: String) -> String { OneLineText.clean(text, maxBytes: 1024) }
}
