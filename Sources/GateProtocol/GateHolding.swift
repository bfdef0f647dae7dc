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

    /// nil inside: empty. nil outside: not an answer of this protocol.
    public static func parse(_ text: String) -> GateHolding?? {
        if text == "empty" { return .some(nil) }
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == "holds", !words[1].isEmpty, words[1].utf8.count <= 32,
              words[1].utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }),
              words[2].utf8.count <= 128, words[2].utf8.count % 2 == 0 else { return nil }
        var tag: [UInt8] = []
        var digits = Array(words[2].utf8)[...]
        while !digits.isEmpty {
            guard let byte = UInt8(String(decoding: digits.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            tag.append(byte)
            digits = digits.dropFirst(2)
        }
        return .some(GateHolding(binding: String(words[1]), tag: tag))
    }
}
