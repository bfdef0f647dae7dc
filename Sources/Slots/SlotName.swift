/// A validated slot name: 1–128 characters of `[A-Za-z0-9][A-Za-z0-9._@+-]*`.
///
/// Safe as a file name: it cannot be empty, start with a dot, or hold a `/`, so `.` and `..` and paths are
/// impossible. Names are not secret.
public struct SlotName: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let maximumLength = 128
    public let rawValue: String

    /// Returns nil when `raw` is not a valid slot name.
    public init?(_ raw: String) {
        let bytes = Array(raw.utf8)
        guard (1...SlotName.maximumLength).contains(bytes.count) else { return nil }
        for (i, b) in bytes.enumerated() {
            let alnum = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            if i == 0 {
                guard alnum else { return nil }
            } else {
                guard alnum || b == 0x2E || b == 0x5F || b == 0x40 || b == 0x2B || b == 0x2D else { return nil }
            }
        }
        rawValue = raw
    }

    /// What a person is told when a name is refused.
    public static let rule = "1–128 characters: a letter or digit, then letters, digits, '.', '_', '@', '+' or '-'"

    public var description: String { rawValue }
    public static func < (a: SlotName, b: SlotName) -> Bool { a.rawValue < b.rawValue }
}
