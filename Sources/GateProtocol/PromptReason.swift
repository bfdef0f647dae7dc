import Slots

/// Why vaultctl asks for a password: every sentence a prompt starts with, written here once. The CLI and the
/// gate ask with its `text` (the protocol carries the reason as text), and the gate's allowlist of sentences
/// it shows as they are (`GateScope.ownSentences`) is made from these cases, so a sentence added here cannot
/// be missing there. Tests and docs quote the words: change them here and there together.
public enum PromptReason: Equatable, Sendable {
    case read(SlotName)
    case replace(SlotName)
    case delete(SlotName)
    case supply(SlotName)
    case allowSupply(SlotName)
    /// `credential erase`: one prompt for every slot that held the credential git rejected.
    case eraseRejectedCredential([SlotName])
    case move(SlotName, to: SlotMode)
    /// A move that found the slot's value in both slots removes the copy it did not keep.
    case removeLeftCopy(SlotName, in: SlotMode)
    case unlockVault
    case sealDeviceKey
    /// `device-key protect`: the authentication for every slot.
    case moveBehindGate
    case replaceRecoveryCode
    case markRecoveryCodeWrittenDown
    /// `send`: `host` and `target` as given on the command line.
    case send(SlotName, host: String, target: String)
    /// `askpass`: `asked` is the asking program's prompt, already cleaned and cut short for showing.
    case askpass(SlotName, asked: String?)

    public var text: String {
        switch self {
        case .read(let n): return "read slot '\(n)'"
        case .replace(let n): return "replace the value in slot '\(n)'"
        case .delete(let n): return "delete slot '\(n)'"
        case .supply(let n): return "supply slot '\(n)'"
        case .allowSupply(let n): return "allow supplying slot '\(n)'"
        case .eraseRejectedCredential(let names):
            return "erase the credential git rejected (\(names.map { "'\($0)'" }.joined(separator: ", ")))"
        case .move(let n, let mode): return "move slot '\(n)' to the \(mode.rawValue) slot"
        case .removeLeftCopy(let n, let mode): return "remove the copy of slot '\(n)' left in the \(mode.rawValue) slot"
        case .unlockVault: return "unlock the vault"
        case .sealDeviceKey: return "seal the device key with the TPM"
        case .moveBehindGate: return "move the device slots behind vaultctl-gate"
        case .replaceRecoveryCode: return "replace the recovery code (first, whether it is the one marked as written down)"
        case .markRecoveryCodeWrittenDown: return "mark the recovery code as written down"
        case .send(let n, let host, let target): return "send slot '\(n)' to \(host) (target \(target))"
        case .askpass(let n, let asked): return "askpass for slot '\(n)'" + (asked.map { ", asked \"\($0)\"" } ?? "")
        }
    }
}

extension PromptReason {
    /// A case without its slots, mode or words: `allCases` lists every sentence vaultctl asks with.
    enum Kind: CaseIterable {
        case read, replace, delete, supply, allowSupply, eraseRejectedCredential, move, removeLeftCopy
        case unlockVault, sealDeviceKey, moveBehindGate, replaceRecoveryCode, markRecoveryCodeWrittenDown
        case send, askpass
    }

    /// Exhaustive, as `sentences(_:naming:)` is over kinds: a new case needs a kind, and a new kind its line
    /// there, so the compiler asks whether the allowlist shows the new sentence as it is.
    var kind: Kind {
        switch self {
        case .read: return .read
        case .replace: return .replace
        case .delete: return .delete
        case .supply: return .supply
        case .allowSupply: return .allowSupply
        case .eraseRejectedCredential: return .eraseRejectedCredential
        case .move: return .move
        case .removeLeftCopy: return .removeLeftCopy
        case .unlockVault: return .unlockVault
        case .sealDeviceKey: return .sealDeviceKey
        case .moveBehindGate: return .moveBehindGate
        case .replaceRecoveryCode: return .replaceRecoveryCode
        case .markRecoveryCodeWrittenDown: return .markRecoveryCodeWrittenDown
        case .send: return .send
        case .askpass: return .askpass
        }
    }

    /// The sentences of `kind` that name, quoted, exactly the slots an authentication for `names` opens: the
    /// gate shows these as they are. None for a sentence that names no slot (the gate says which it opens),
    /// or that holds words from elsewhere (a host, another program's prompt), which could name any.
    /// A move names only the modes a person can give (`SlotMode.offered`): no move to or from the fleet
    /// is asked for while it has no backend.
    static func sentences(_ kind: Kind, naming names: [SlotName]) -> [PromptReason] {
        let one = names.count == 1 ? names.first : nil
        switch kind {
        case .read: return one.map { [.read($0)] } ?? []
        case .replace: return one.map { [.replace($0)] } ?? []
        case .delete: return one.map { [.delete($0)] } ?? []
        case .supply: return one.map { [.supply($0)] } ?? []
        case .allowSupply: return one.map { [.allowSupply($0)] } ?? []
        case .eraseRejectedCredential: return [.eraseRejectedCredential(names)]
        case .move: return one.map { n in SlotMode.offered.map { .move(n, to: $0) } } ?? []
        case .removeLeftCopy: return one.map { n in SlotMode.offered.map { .removeLeftCopy(n, in: $0) } } ?? []
        case .unlockVault, .sealDeviceKey, .moveBehindGate, .replaceRecoveryCode, .markRecoveryCodeWrittenDown: return []
        case .send, .askpass: return []
        }
    }
}
