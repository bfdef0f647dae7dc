/// Secret values for tests. Each carries a unique marker, so a test can tell its secret from any other
/// text in an output (and search for it in stderr and list output).
enum TestData {
    /// Bytes a text-only implementation would damage: NUL, newlines (also trailing), CR, 0xff, invalid UTF-8.
    static func binarySecret(_ marker: String) -> [UInt8] {
        [0x00, 0x0a] + Array("bin-\(marker)".utf8) + [0xff, 0x00, 0x0d, 0x0a, 0xfe, 0x80, 0x0a]
    }

    /// A printable secret, easy to search for in text.
    static func textSecret(_ marker: String) -> [UInt8] { Array("s3cret-\(marker)".utf8) }

    /// `count` bytes covering every byte value.
    static func pattern(count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if Array(self[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}
