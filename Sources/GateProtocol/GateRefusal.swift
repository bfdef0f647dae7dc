import Slots
import VaultRules

/// A refusal as it crosses the gate protocol: the error the gate met, so the CLI reports it in the same
/// words and with the same exit code as when it met it itself. Payload: fields joined by U+001F, the first
/// naming the case; every field is cleaned of control characters. The subset the gate can meet; anything
/// else arrives as `refused` with its text.
public enum GateRefusal {
    package static let separator: Character = "\u{1F}"

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
        case .fleetNotConfigured(let p): return ["fleet-not-configured", p]  // the gate never meets it
        case .io(let p, let n, let op): return ["io", p, "\(n)", op]
        }
    }

    /// One field: control characters (the separator among them) become spaces, at most 1024 bytes.
    static func clean(_ text: String) -> String { OneLineText.clean(text, maxBytes: 1024) }
}
