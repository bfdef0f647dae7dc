/// Writes a `JSONValue` as JSON text, always the same bytes for the same value.
///
/// Object keys are sorted by their UTF-8 bytes (as `JSONEncoder`'s `.sortedKeys` did); strings are escaped
/// by `JSONEscaping`; numbers are written by `JSONNumber`, so they read back exactly. Two styles:
/// - `compact`: no whitespace at all, one line (`{"a":1,"b":[true,null]}`), for state files and audit lines;
/// - `pretty`: two spaces per level and `"key" : value`, the layout `JSONEncoder`'s `.prettyPrinted` wrote,
///   for files a person may open (`modes.json`). An empty object or array is `{}` / `[]`. No final newline.
package enum JSONWriter {
    package enum Style: Sendable {
        case compact
        case pretty
    }

    /// The text of `value` as UTF-8 bytes.
    package static func bytes(_ value: JSONValue, style: Style = .compact) -> [UInt8] {
        var out: [UInt8] = []
        write(value, style: style, indent: 0, to: &out)
        return out
    }

    private static func write(_ value: JSONValue, style: Style, indent: Int, to out: inout [UInt8]) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let n): out += Array(String(n).utf8)
        case .number(let d): out += Array(JSONNumber.text(d).utf8)
        case .string(let s): JSONEscaping.appendQuoted(s, to: &out)
        case .array(let items):
            writeContainer(open: "[", close: "]", count: items.count, style: style, indent: indent, to: &out) { i, out in
                write(items[i], style: style, indent: indent + 1, to: &out)
            }
        case .object(let members):
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            writeContainer(open: "{", close: "}", count: keys.count, style: style, indent: indent, to: &out) { i, out in
                JSONEscaping.appendQuoted(keys[i], to: &out)
                out += Array((style == .pretty ? " : " : ":").utf8)
                write(members[keys[i]] ?? .null, style: style, indent: indent + 1, to: &out)
            }
        }
    }

    /// The brackets, the separators and (pretty) the line breaks and indentation around `count` elements.
    private static func writeContainer(open: Unicode.Scalar, close: Unicode.Scalar, count: Int, style: Style, indent: Int,
                                       to out: inout [UInt8], element: (Int, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: open))
        if count > 0 {
            for i in 0..<count {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if style == .pretty { newline(indent: indent + 1, to: &out) }
                element(i, &out)
            }
            if style == .pretty { newline(indent: indent, to: &out) }
        }
        out.append(UInt8(ascii: close))
    }

    private static func newline(indent: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        out += [UInt8](repeating: UInt8(ascii: " "), count: 2 * indent)
    }
}
