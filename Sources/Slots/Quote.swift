/// User input made safe to show in a one-line message, as systemd's `cescape` does: control characters,
/// invisible format characters and anything unassigned become escapes (`\n`, `\x1b`, `\u{202E}`), so a
/// slot name, a command word or a path can neither break the line nor send escape sequences to a terminal.
public enum Quote {
    /// `'text'` with `\` and `'` escaped too, for a piece of input inside a message.
    public static func text(_ text: String) -> String {
        "'" + escaped(text, quotes: true) + "'"
    }

    /// The text with what is not printable escaped (and, with `quotes`, `\` and `'`), without quotes around it.
    public static func escaped(_ text: String, quotes: Bool = true) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\" where quotes: out += "\\\\"
            case "'" where quotes: out += "\\'"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if let byte = ArgumentBytes.rawByte(scalar) {
                    out += "\\x" + hex(UInt32(byte), width: 2)  // a byte that was not valid UTF-8
                } else if isShown(scalar) {
                    out.unicodeScalars.append(scalar)
                } else if scalar.value < 0x80 {
                    out += "\\x" + hex(scalar.value, width: 2)
                } else {
                    out += "\\u{" + hex(scalar.value, width: 4) + "}"
                }
            }
        }
        return out
    }

    /// A whole message made one line: every character that is not shown as itself is escaped; `\` and `'`
    /// are left alone (the pieces in it were quoted already).
    public static func oneLine(_ message: String) -> String {
        guard message.unicodeScalars.contains(where: { !isShown($0) }) else { return message }
        return escaped(message, quotes: false)
    }

    /// Whether a scalar is shown as itself: printable ASCII, and any other assigned character that is not a
    /// control, a format character (bidirectional overrides, zero-width joiners), a line or paragraph
    /// separator, a surrogate or private use.
    static func isShown(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value >= 0x20 && scalar.value != 0x7f }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
            return false
        default:
            return true
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
