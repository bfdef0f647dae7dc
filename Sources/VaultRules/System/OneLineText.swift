/// Text made one field of a line protocol (the hand-off lines, the gate's requests and refusals): control
/// characters (C0, DEL, C1), format characters (bidi overrides, zero-width joiners) and line or paragraph
/// separators become spaces, and it is cut at `maxBytes` of UTF-8 on a character boundary.
public enum OneLineText {
    public static func clean(_ text: String, maxBytes: Int) -> String {
        var out = ""
        var length = 0
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            let unsafe = scalar.value < 0x20 || scalar.value == 0x7f || (0x80...0x9f).contains(scalar.value)
                || category == .format || category == .lineSeparator || category == .paragraphSeparator
            let shown: Unicode.Scalar = unsafe ? " " : scalar
            let size = String(shown).utf8.count
            if length + size > maxBytes { break }
            out.unicodeScalars.append(shown)
            length += size
        }
        return out
    }
}
