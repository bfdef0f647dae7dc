/// Every command, as a type the compiler can check exhaustively: deciding what runs while the vault is
/// locked, what is gated and what is audited is a `switch` with no `default`, so a new command cannot be
/// added without deciding.
enum CommandKind: String, CaseIterable, Sendable {
    case store, read, delete, list, status, move
    case recoveryGenerate = "recovery generate"
    case recoveryShow = "recovery show"
    case recoveryStatus = "recovery status"
    case recoveryConfirmCopied = "recovery confirm-copied"
    case supply, askpass
    case allowSupply = "allow-supply"
    case lock, unlock, log
    case policyCheck = "policy check"
    case help

    /// Whether the command may run while the vault is locked (`vaultctl lock`).
    var allowedWhileLocked: Bool {
        switch self {
        case .status, .list, .lock, .unlock, .log, .help:
            return true
        case .store, .read, .delete, .move, .recoveryGenerate, .recoveryShow, .recoveryStatus,
             .recoveryConfirmCopied, .supply, .askpass, .allowSupply, .policyCheck:
            return false
        }
    }

    /// Whether the command may ask PAM, and so is blocked (75, no prompt) while the rate limit blocks.
    /// `allow-supply` asks only when turning supply on; it is checked here all the same.
    var isGated: Bool {
        switch self {
        case .read, .move, .recoveryShow, .supply, .askpass, .allowSupply, .unlock:
            return true
        case .store, .delete, .list, .status, .recoveryGenerate, .recoveryStatus, .recoveryConfirmCopied,
             .lock, .log, .policyCheck, .help:
            return false
        }
    }

    /// Whether the command leaves a line in the audit log: every gated command, and lock.
    var isAudited: Bool {
        switch self {
        case .read, .move, .recoveryShow, .supply, .askpass, .allowSupply, .unlock, .lock:
            return true
        case .store, .delete, .list, .status, .recoveryGenerate, .recoveryStatus, .recoveryConfirmCopied,
             .log, .policyCheck, .help:
            return false
        }
    }
}
