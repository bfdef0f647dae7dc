import Slots

/// Test-only conversions: test secrets are made-up text, so seeing them as `String` is fine here.
extension SecretBytes {
    static func text(_ text: String) -> SecretBytes {
        Array(text.utf8).withUnsafeBytes { SecretBytes(copying: $0) }
    }

    var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
