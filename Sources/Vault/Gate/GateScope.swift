import Slots

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

    /// The prompt's words: `reason` when it names exactly the slots opened (each in single quotes, and no
    /// other), else `reason` followed by what is opened, in the gate's words.
    public func prompt(_ reason: String) -> String {
        switch self {
        case .none: return reason
        case .everySlot: return "\(reason) (opens every slot)"
        case .slots(let names):
            let quoted = Set(reason.split(separator: "'", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.compactMap { SlotName(String($0.element)) })
            if quoted == Set(names) { return reason }
            let list = names.map { "'\($0)'" }.joined(separator: ", ")
            return "\(reason) (opens slot\(names.count == 1 ? "" : "s") \(list))"
        }
    }
}
