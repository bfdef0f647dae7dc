/// Command-line words that are not valid UTF-8, kept byte for byte inside a `String`.
///
/// The kernel hands a program bytes; Swift's `String` holds Unicode. Decoding an invalid byte as U+FFFD
/// loses it: a message could not say which byte was wrong, and a word passed on to a child program would
/// arrive changed. Instead each byte that is not part of a valid UTF-8 sequence becomes one scalar of the
/// last 256 code points of plane 16's private use area (U+10FF00 + byte), the way Python's
/// `surrogateescape` does; `Quote` shows such a scalar as `\xNN`, and `bytes(of:)` gives the
/// original bytes back for `exec`. Valid UTF-8 is decoded as it is.
public enum ArgumentBytes {
    static let base: UInt32 = 0x10FF00

    /// The word as a `String`, its invalid bytes kept as escape scalars. One-to-one: a valid scalar that
    /// falls in the escape range itself is kept as the escapes of its bytes, so `bytes(of:)` gives back
    /// exactly the word that came in.
    public static func decode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let raw = Array(bytes)
        // Almost every word is ASCII: valid as it is, and no escape scalar can be in it.
        if !raw.contains(where: { $0 >= 0x80 }) { return String(decoding: raw, as: UTF8.self) }
        if let valid = String(validating: raw, as: UTF8.self), !valid.unicodeScalars.contains(where: { rawByte($0) != nil }) {
            return valid
        }
        var out = String.UnicodeScalarView()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = raw.makeIterator()
        var at = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if rawByte(scalar) != nil {
                    for b in encoded { out.append(escape(b)) }
                } else {
                    out.append(scalar)
                }
                at += encoded.count
            case .error(let length):
                for b in raw[at..<(at + length)] { out.append(escape(b)) }
                at += length
            case .emptyInput:
                return String(out)
            }
        }
    }

    private static func escape(_ byte: UInt8) -> Unicode.Scalar { Unicode.Scalar(base + UInt32(byte))! }

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
