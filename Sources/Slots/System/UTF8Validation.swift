/// Whether bytes are valid UTF-8, for every reader that must refuse what is not text (D-Bus strings,
/// JSON strings, the content type of a stored secret).
public enum UTF8Validation {
    /// Whether `bytes` are well-formed UTF-8 (the rules `String(validating:)` applies: no overlong forms, no
    /// surrogates, nothing past U+10FFFF); with `allowingNUL` false, a zero byte makes them not text either.
    /// ASCII, the usual case, is checked a byte at a time. Inlinable, so a caller in another module (the JSON
    /// parser reads every string of a document through it) gets a copy specialized to its bytes instead of
    /// the generic one, which goes through protocol witnesses for every byte.
    @inlinable
    public static func isValid<C: Collection>(_ bytes: C, allowingNUL: Bool = true) -> Bool where C.Element == UInt8 {
        if bytes.allSatisfy({ $0 < 0x80 }) { return allowingNUL || !bytes.contains(0) }
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): if !allowingNUL && encoded.count == 1 && encoded.first == 0 { return false }
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
