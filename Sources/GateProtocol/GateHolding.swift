import Slots
import VaultRules

/// The gate's answer to `holding`: `empty`, or `holds BINDING TAG` (the key's binding, the stored tag in
/// hex). A slot it could not look at is a refusal carrying the slot's error.
public struct GateHolding: Equatable, Sendable {
    public let binding: String
    public let tag: [UInt8]

    public init(binding: String, tag: [UInt8]) {
        self.binding = binding
        self.tag = tag
    }

    public static func text(_ h: GateHolding?) -> String {
        guard let h else { return "empty" }
        // `Hex`'s lower-case digits: a `joined()` over mapped strings made the runtime look its types up by
        // name in the gate at every look (about 0.1 ms).
        return "holds " + h.binding + " " + Hex.encodePublic(h.tag)
    }
}
