import GateProtocol
import Slots
import VaultRules

/// The CLI's half of `GateRefusal`: the error a refusal names, read back. The gate only writes refusals
/// (`GateRefusal.encode`), so this half is not in its modules (OpenSSH keeps `monitor_wrap.c` apart from
/// `monitor.c` alike); GateProtocolTests and the fuzzer check that the two halves agree.
extension GateRefusal {
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
        case ("fleet-not-configured", 2): return .fleetNotConfigured(path: f[1])
        case ("io", 4): return Int32(f[2]).map { .io(path: f[1], errno: $0, operation: f[3]) }
        default: return nil
        }
    }
}
