/// How vaultctl writes a string as JSON: one function for the files (`JSONWriter`) and the `--json` output
/// of the command line.
///
/// `"` and `\` are escaped, and so are the control characters U+0000–U+001F (`\n`, `\r`, `\t`, the others as
/// `\u00XX`); everything else, `/` included, is written as its UTF-8 bytes. A Swift `String` is always valid
/// Unicode, so the result is always valid JSON.
public enum JSONEscaping {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal, quotes included, to `out`.
    package static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        digits[Int(byte >> 4)], digits[Int(byte & 15)]]
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
