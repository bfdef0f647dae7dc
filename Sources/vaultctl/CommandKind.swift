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
    case deviceKeyStatus = "device-key status"
    case deviceKeySeal = "device-key seal"
    case deviceKeyProtect = "device-key protect"
    case help
    case completion
    case credentialGet = "credential get"
    case credentialStore = "credential store"
    case credentialErase = "credential erase"
    case send, receive
    case targetAdd = "target add"
    case targetList = "target list"
    case targetRemove = "target remove"

    /// Whether the command refuses a slot name kept for vaultctl's own values (`SlotName.isReserved`): the
    /// commands that change a slot or hand its value to another program (a command's input, an askpass
    /// request, another machine: the fleet's machine key must never leave this one). Reads and status do not,
    /// so a value that already has such a name stays readable by the person.
    var refusesReservedNames: Bool {
        switch self {
        case .store, .move, .delete, .supply, .allowSupply, .askpass, .send:
            return true
        case .read, .list, .status, .recoveryGenerate, .recoveryShow, .recoveryStatus, .recoveryConfirmCopied,
             .lock, .unlock, .log, .policyCheck, .deviceKeyStatus, .deviceKeySeal, .deviceKeyProtect,
             .help, .completion, .credentialGet, .credentialStore, .credentialErase, .receive,
             .targetAdd, .targetList, .targetRemove:
            return false
        }
    }

    /// Whether the command may run while the vault is locked (`vaultctl lock`).
    var allowedWhileLocked: Bool {
        switch self {
        // `policy check` reads no secret and changes nothing.
        case .status, .list, .lock, .unlock, .log, .help, .completion, .policyCheck:
            return true
        case .store, .read, .delete, .move, .recoveryGenerate, .recoveryShow, .recoveryStatus,
             .recoveryConfirmCopied, .supply, .askpass, .allowSupply, .deviceKeySeal, .deviceKeyProtect,
             .deviceKeyStatus, .credentialGet, .credentialStore, .credentialErase,
             .send, .receive, .targetAdd, .targetList, .targetRemove:
            return false
        }
    }

    /// Whether the command looks at the vault (the lock check of every command not allowed while it is
    /// locked is one look): when vaultctl-gate is installed, it is started before anything else is done.
    var looksAtVault: Bool {
        switch self {
        case .help, .completion, .policyCheck:
            return false
        case .store, .read, .delete, .list, .status, .move, .recoveryGenerate, .recoveryShow, .recoveryStatus,
             .recoveryConfirmCopied, .supply, .askpass, .allowSupply, .lock, .unlock, .log, .deviceKeyStatus,
             .deviceKeySeal, .deviceKeyProtect, .credentialGet, .credentialStore, .credentialErase, .send, .receive,
             .targetAdd, .targetList, .targetRemove:
            return true
        }
    }

    /// Whether the command asks for a password whenever it does its work, not only when it would replace a
    /// value (`store`, `recovery generate`): vaultctl-gate is told so at its start (`--authenticating`) and
    /// makes ready for it; for the others that would be work their first request waits for in vain.
    var authenticatesAsARule: Bool { mayAskPAM && self != .store && self != .recoveryGenerate }

    /// Whether the command always asks the Secret Service (it looks at both slots, never reads a value):
    /// with vaultctl-gate started, the session bus is connected meanwhile (`SecretServiceSlot.connectAhead`).
    var looksAtBothSlots: Bool {
        switch self {
        case .status, .list, .recoveryStatus: return true
        default: return false
        }
    }

    /// Whether the rate limit is checked before the command does anything (75 with no prompt while
    /// blocked). Commands whose own checks come first in a fixed order (supply and askpass: permission,
    /// origin, then the limit; unlock: origin first; allow-supply: `off` needs no password) are not
    /// checked here; their PAM prompt still checks the limit.
    var checksRateLimitFirst: Bool {
        switch self {
        case .read, .move, .recoveryShow, .deviceKeySeal, .deviceKeyProtect, .credentialGet, .recoveryConfirmCopied, .credentialErase:
            return true
        case .supply, .askpass, .allowSupply, .unlock, .store, .delete, .list, .status, .recoveryGenerate,
             .recoveryStatus, .lock, .log, .policyCheck, .help, .deviceKeyStatus, .completion,
             .credentialStore, .send, .receive, .targetAdd, .targetList, .targetRemove:
            return false
        }
    }

    /// Whether the command may ask PAM, and so takes `--password-stdin` (the command table adds it). `store`,
    /// `delete` and `recovery generate` ask only when a value would be lost.
    var mayAskPAM: Bool {
        switch self {
        // `recovery confirm-copied` and `credential erase` read the value to compare it (a device read opens
        // the device key: with a TPM, an unseal), so they are gated like a read.
        case .read, .move, .recoveryShow, .supply, .askpass, .allowSupply, .unlock, .deviceKeySeal, .deviceKeyProtect, .credentialGet, .send,
             .recoveryConfirmCopied, .credentialErase, .store, .delete, .recoveryGenerate:
            return true
        // `receive` asks nothing and writes its own audit lines (judged from what sshd says about the sender).
        case .list, .status, .recoveryStatus,
             .lock, .log, .policyCheck, .help, .deviceKeyStatus, .completion, .credentialStore,
             .receive, .targetAdd, .targetList, .targetRemove:
            return false
        }
    }

    /// How the man page's SECURITY section names the command among those PAM gates (nil: not gated), from
    /// `mayAskPAM`, so the list cannot miss one: the ones that ask only when a value would be lost say when.
    var gatedAs: String? {
        guard mayAskPAM else { return nil }
        switch self {
        case .store: return "store over a value"
        case .delete: return "delete of a value"
        case .recoveryGenerate: return "recovery generate over a code"
        case .allowSupply: return "allow-supply on"
        default: return rawValue
        }
    }

    /// Whether `--password-stdin` is offered: `credential get` and `erase` may ask PAM, but their standard
    /// input is git's credential description; `store`'s carries the new secret.
    var takesPasswordStdin: Bool { mayAskPAM && self != .credentialGet && self != .credentialErase && self != .store }

    /// Whether the command changes what the vault holds or allows (each change leaves an audit line).
    var isChange: Bool {
        switch self {
        // `credential store` writes a slot (git's password, without PAM); the targets are what `receive`
        // runs with a secret on its standard input.
        case .store, .delete, .move, .recoveryGenerate, .recoveryConfirmCopied, .allowSupply, .lock, .unlock,
             .deviceKeySeal, .deviceKeyProtect, .credentialStore, .targetAdd, .targetRemove:
            return true
        // `receive` writes its own audit lines.
        case .read, .list, .status, .recoveryShow, .recoveryStatus, .supply, .askpass, .log, .policyCheck, .help,
             .deviceKeyStatus, .completion, .credentialGet, .credentialErase,
             .send, .receive, .targetList:
            return false
        }
    }

    /// Whether the command leaves a line in the audit log: every gated command, and every change.
    var isAudited: Bool { mayAskPAM || isChange }
}
