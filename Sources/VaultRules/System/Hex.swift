import Slots

/// Lowercase hex for salts, fingerprints and ids (not secrets).
public enum Hex {
    public static func encode(_ s: SecretBytes) -> String {
        s.withUnsafeBytes { raw in
            let digits = Array("0123456789abcdef".utf8)
            var out = [UInt8]()
            for b in raw {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 15)])
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Public bytes (a stored tag) in the same lowercase hex.
    package static func encodePublic(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    package static func decode(_ text: String) -> SecretBytes? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0, chars.count <= 128 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        let out = SecretBytes(capacity: chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            var b = hi << 4 | lo
            withUnsafeBytes(of: &b) { _ = out.append($0) }
            i += 2
        }
        return out
    }
}
