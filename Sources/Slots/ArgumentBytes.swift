/// Command-line words that are not valid UTF-8, kept byte for byte inside a `String`.
///
/// The kernel hands a program bytes; Swift's `String` holds Unicode. Decoding an invalid byte as U+FFFD
/// loses it: a message could not say which byte was wrong, and a word passed on to a child program would
/// arrive changed. Instead each byte that is not part of a valid UTF-8 sequence becomes one scalar of the
/// last 256 code points of plane 16's private use area (U+10FF00 + byte), the way Python's
/// `surrogateescape` keeps them; `Quote` shows such a scalar as `\xNN`, and `bytes(of:)` gives the
/// original bytes back for `exec`. Valid UTF-8 is decoded as it is.
public enum ArgumentBytes {
    static let base: UInt32 = 0x10FF00

    /// The word as a `String`, its invalid bytes kept as escape scalars.
    public static func decode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = String.UnicodeScalarView()
        var decoder = UTF8()
        let raw = Array(bytes)
        var at = 0
        // Decode one valid sequence at a time; on an error, escape its first byte and go on after it.
        while at < raw.count {
            var slice = raw[at...].makeIterator()
            switch decoder.decode(&slice) {
            case .scalarValue(let scalar):
                out.append(scalar)
                at += UTF8.width(scalar)
            case .error:
                out.append(Unicode.Scalar(base + UInt32(raw[at]))!)
                at += 1
                decoder = UTF8()
            case .emptyInput:
                at = raw.count
            }
        }
        return String(out)
    }

    /// The byte an escape scalar stands for; nil for every other scalar.
    public static func rawByte(_ scalar: Unicode.Scalar) -> UInt8? {
        scalar.value >= base && scalar.value <= base + 0xFF ? UInt8(scalar.value - base) : nil
    }

    /// The word's bytes as they came in: escape scalars back to their bytes, the rest as UTF-8.
    public static func bytes(of word: String) -> [UInt8] {
        guard word.unicodeScalars.contains(where: { rawByte($0) != nil }) else { return Array(word.utf8) }
        var out: [UInt8] = []
        for scalar in word.unicodeScalars {
            if let b = rawByte(scalar) { out.append(b) } else { out += Array(String(scalar).utf8) }
        }
        return out
    }
}
