import GateProtocol
import Slots
import VaultRules

/// Account recovery codes: 160 random bits written as 32 base32 letters in eight groups of four
/// (`ABCD-EFGH-…`), easy to write down or read aloud. The alphabet is RFC 4648's, which has no 0/1/8 to
/// confuse with O/I/B.
public enum RecoveryCode {
    /// The slot the recovery code lives in.
    public static let slot = SlotName("recovery-code")!
    public static let randomBytes = 20
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// A new code, built directly in a wiped buffer.
    public static func generate() -> SecretBytes {
        let random = SecretBytes.random(count: randomBytes)
        return encode(random)
    }

    /// Base32 in groups of four separated by '-' (the encoding of 20 bytes is exactly 32 letters).
    static func encode(_ bytes: SecretBytes) -> SecretBytes {
        let letters = bytes.count * 8 / 5
        let out = SecretBytes(capacity: letters + letters / 4)
        bytes.withUnsafeBytes { raw in
            out.withUnsafeMutableBytes { dst, used in
                var acc: UInt32 = 0
                var bits = 0
                var written = 0
                for byte in raw {
                    acc = (acc << 8) | UInt32(byte)
                    bits += 8
                    while bits >= 5 {
                        bits -= 5
                        if written > 0 && written % 4 == 0 {
                            dst[used] = UInt8(ascii: "-")
                            used += 1
                        }
                        dst[used] = alphabet[Int((acc >> UInt32(bits)) & 31)]
                        used += 1
                        written += 1
                    }
                    acc &= (1 << UInt32(bits)) - 1
                }
                acc = 0
            }
        }
        return out
    }
}
