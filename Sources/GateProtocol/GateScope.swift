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

    /// The sentences vaultctl itself asks with that name exactly these slots (`PromptReason`: every kind).
    static func ownSentences(for names: [SlotName]) -> Set<String> {
        Set(PromptReason.Kind.allCases.flatMap { PromptReason.sentences($0, naming: names) }.map(\.text))
    }
}
