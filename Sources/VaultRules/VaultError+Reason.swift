import Slots

extension VaultError {
    /// A vault error's words inside another message (or a log line).
    public static func reason(_ e: VaultError) -> String {
        switch e {
        case .slot(let s): return reason(s)
        case .authenticationFailed(let m), .notAuthenticated(let m), .accountRefused(let m),
             .authenticationUnavailable(let m), .refused(let m), .badInput(let m): return m
        case .vaultLocked: return "the vault is locked"
        case .auditUnwritable: return "the audit log could not be written"
        default: return "\(e)"
        }
    }

    /// A slot error's words inside another message (or a log line): its own reason, without a closing full stop.
    public static func reason(_ e: SlotError) -> String {
        switch e {
        case .serviceUnavailable(let r), .locked(let r): return r
        default:
            var text = SlotErrorText.describe(e)
            if text.hasSuffix(".") { text.removeLast() }
            return text
        }
    }
}
