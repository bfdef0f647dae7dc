import Slots
import VaultRules

/// What an authentication opens for the rest of its exchange.
public enum GateScope: Equatable, Sendable {
    /// No slot (`-`): the person was asked, nothing of the vault opens on it.
    case none
    /// These slots (`a,b`: a comma is never in a slot name).
    case slots([SlotName])
    /// Every slot (`*`): only `device-key protect`, which moves them all.
    case everySlot

    static let maximumSlots = 64

    public var text: String {
        switch self {
        case .none: return "-"
        case .everySlot: return "*"
        case .slots(let names): return names.map(\.rawValue).joined(separator: ",")
        }
    }

    static func parse(_ word: String) -> GateScope? {
        if word == "-" { return GateScope.none }
        if word == "*" { return .everySlot }
        let parts = word.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...maximumSlots).contains(parts.count) else { return nil }
        var names: [SlotName] = []
        for part in parts {
            guard let name = SlotName(String(part)) else { return nil }
            names.append(name)
        }
        return .slots(names)
    }

    /// The prompt's words: `reason` alone when it is one of vaultctl's own sentences for exactly the slots
    /// opened ("read slot 'mail'"), else `reason` followed by what is opened, in the gate's words. Free text
    /// is never searched for names: "(slot 'bank' stays closed)" names bank too.
    public func prompt(_ reason: String) -> String {
        switch self {
        case .none: return reason
        case .everySlot: return "\(reason) (opens every slot)"
        case .slots(let names):
            if Self.ownSentences(for: names).contains(reason) { return reason }
            let list = names.map { "'\($0)'" }.joined(separator: ", ")
            return "\(reason) (opens slot\(names.count == 1 ? "" : "s") \(list))"
        }
    }

    /// The sentences vaultctl itself asks with for these slots (`Vault`, `move`, `supply`, `credential erase`).
    static func ownSentences(for names: [SlotName]) -> Set<String> {
        guard names.count == 1, let n = names.first else {
            return ["erase the credential git rejected (\(names.map { "'\($0)'" }.joined(separator: ", ")))"]
        }
        var out: Set<String> = ["read slot '\(n)'", "replace the value in slot '\(n)'", "delete slot '\(n)'",
                                "supply slot '\(n)'", "allow supplying slot '\(n)'", "erase the credential git rejected ('\(n)')"]
        for mode in SlotMode.allCases {
            out.insert("move slot '\(n)' to the \(mode.rawValue) slot")
            out.insert("remove the copy of slot '\(n)' left in the \(mode.rawValue) slot")
        }
        return out
    }
}
