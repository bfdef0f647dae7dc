/// JSON numbers in both directions, exactly.
///
/// Reading: the parser has already checked the token's grammar (`-? (0 | [1-9][0-9]*) (. [0-9]+)?
/// ([eE] [+-]? [0-9]+)?`); a token without fraction or exponent that fits `Int` is read as that integer,
/// any other token through `Double(_:)` on the exact text (correctly rounded, and independent of the C
/// locale, unlike `strtod`). A result that is whole and fits `Int` is an integer (`3.0`, `6e1`).
///
/// Writing: an integer in decimal; a `Double` as Swift's `description`, the shortest text that reads back as
/// the same `Double` (`1764412345.123456`, `0.1`, `1e+20`), without a final `.0` (`1800000123`), as
/// `JSONEncoder` wrote it. So every finite `Double` written is read back bit for bit (except that `-0`
/// reads as the integer 0).
package enum JSONNumber {
    /// The value of a number token, or nil when it lies beyond `Double` (`1e400`).
    ///
    /// `isPlainInteger` says the token has neither a fraction nor an exponent.
    package static func value(_ token: UnsafeRawBufferPointer, isPlainInteger: Bool) -> JSONValue? {
        let text = String(decoding: token, as: UTF8.self)
        if isPlainInteger, let integer = Int(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { return nil }
        if let integer = Int(exactly: double) { return .integer(integer) }
        return .number(double)
    }

    /// The JSON text of a finite `Double`; `null` for infinity and NaN, which JSON cannot hold.
    package static func text(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
