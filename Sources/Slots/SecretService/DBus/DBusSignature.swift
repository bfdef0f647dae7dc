/// Facts about D-Bus type signatures: alignment, and splitting a signature into complete types.
enum DBusSignature {
    /// The wire alignment of a value whose signature starts with `signature`'s first character.
    static func alignment(of signature: some StringProtocol) -> Int {
        switch signature.utf8.first {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
        default: return 4  // b i u h s o a
        }
    }

    /// The complete types a signature is made of ("sa{sv}" → ["s", "a{sv}"]); nil when it is malformed.
    static func split(_ signature: String) -> [String]? {
        let chars = Array(signature.utf8)
        var out: [String] = []
        var i = 0
        while i < chars.count {
            guard let end = completeTypeEnd(chars, i, depth: 0) else { return nil }
            out.append(String(decoding: chars[i..<end], as: UTF8.self))
            i = end
        }
        return out
    }

    /// Where the complete type starting at `i` ends (exclusive); nil when malformed.
    /// A dict entry `{…}` is a complete type only as an array's element (`afterArray`).
    static func completeTypeEnd(_ chars: [UInt8], _ i: Int, depth: Int, afterArray: Bool = false) -> Int? {
        guard i < chars.count, depth < 64 else { return nil }
        switch chars[i] {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
             UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"),
             UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "v"), UInt8(ascii: "h"):
            return i + 1
        case UInt8(ascii: "a"):
            return completeTypeEnd(chars, i + 1, depth: depth + 1, afterArray: true)
        case UInt8(ascii: "("):
            var j = i + 1
            guard j < chars.count, chars[j] != UInt8(ascii: ")") else { return nil }
            while j < chars.count && chars[j] != UInt8(ascii: ")") {
                guard let next = completeTypeEnd(chars, j, depth: depth + 1) else { return nil }
                j = next
            }
            return j < chars.count ? j + 1 : nil
        case UInt8(ascii: "{"):
            // A dict entry: a basic key type, then one complete type, then "}".
            guard afterArray, i + 1 < chars.count, "ybnqiuxtdsog".utf8.contains(chars[i + 1]) else { return nil }
            guard let valueEnd = completeTypeEnd(chars, i + 2, depth: depth + 1),
                  valueEnd < chars.count, chars[valueEnd] == UInt8(ascii: "}") else { return nil }
            return valueEnd + 1
        default:
            return nil
        }
    }
}
