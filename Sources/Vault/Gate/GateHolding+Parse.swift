import GateProtocol

/// The CLI's half of `GateHolding`: the gate's answer to `holding`, read back (the gate only writes it).
extension GateHolding {
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
