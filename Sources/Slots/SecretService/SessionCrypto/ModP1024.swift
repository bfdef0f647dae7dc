/// The Diffie–Hellman group of the Secret Service session algorithm: RFC 2409's "Second Oakley Group", the
/// 1024-bit MODP prime `p = 2¹⁰²⁴ − 2⁹⁶⁰ − 1 + 2⁶⁴·(⌊2⁸⁹⁴·π⌋ + 129093)` with generator 2.
///
/// libsecret names it "ietf-ike-grp-modp-1024" (`egg/egg-dh.c`). `p` is a safe prime (`(p − 1)/2` is prime),
/// so the only elements of small order are 1 and `p − 1`; refusing those (and anything outside `2…p − 2`)
/// leaves a peer no way to force the shared secret into a tiny set.
enum ModP1024 {
    /// Bytes in an element written at full length (the prime's length).
    static let byteCount = Montgomery1024.byteCount

    /// The prime as RFC 2409 §6.2 prints it, most significant 64 bits first. (Integer literals, not a hex
    /// string: parsing one cost 50 µs at start-up.)
    static let primeWords: [UInt64] = [
        0xFFFFFFFF_FFFFFFFF, 0xC90FDAA2_2168C234, 0xC4C6628B_80DC1CD1, 0x29024E08_8A67CC74,
        0x020BBEA6_3B139B22, 0x514A0879_8E3404DD, 0xEF9519B3_CD3A431B, 0x302B0A6D_F25F1437,
        0x4FE1356D_6D51C245, 0xE485B576_625E7EC6, 0xF44C42E9_A637ED6B, 0x0BFF5CB6_F406B7ED,
        0xEE386BFB_5A899FA5, 0xAE9F2411_7C4B1FE6, 0x49286651_ECE65381, 0xFFFFFFFF_FFFFFFFF,
    ]

    /// The prime, big-endian bytes.
    static var primeBytes: [UInt8] {
        primeWords.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * $0)) } }
    }

    /// Montgomery constants for the prime, computed once.
    private static let arithmetic = Montgomery1024(modulus: primeWords.reversed())

    /// A public group element `y` with `1 < y < p − 1`.
    struct Element: Sendable, Equatable {  // Sendable: a public value
        /// 16 little-endian limbs.
        let limbs: [UInt64]

        /// The generator, 2.
        static let generator = Element(bigEndian: [2])!

        /// Parses big-endian unsigned bytes (any number of leading zeros: some services write a sign byte);
        /// nil when empty, longer than 128 bytes without them, or not in `2…p − 2`. The value is public, so
        /// the checks may take data-dependent time.
        init?(bigEndian raw: [UInt8]) {
            guard !raw.isEmpty else { return nil }
            let bytes = ModP1024.minimalBigEndian(raw)
            guard bytes.count <= ModP1024.byteCount else { return nil }
            let y = ModP1024.limbs(bigEndian: bytes)
            var pMinusOne = ModP1024.arithmetic.modulus
            pMinusOne[0] -= 1  // the prime is odd: no borrow
            var two = [UInt64](repeating: 0, count: Montgomery1024.limbCount)
            two[0] = 2
            guard !ModP1024.less(y, two), ModP1024.less(y, pMinusOne) else { return nil }
            limbs = y
        }
    }

    /// `base^exponent mod p`, written big-endian and left-padded with zeros to 128 bytes.
    /// Constant time in the exponent, whose every bit (all `8 × count`) is processed.
    static func power(_ base: Element, exponent: SecretBytes) -> SecretBytes {
        exponent.withUnsafeBytes { arithmetic.power(base.limbs, exponent: $0) }
    }

    /// `bytes` without its leading zero bytes: the shortest big-endian form (gcrypt's `GCRYMPI_FMT_USG`).
    /// For public values only: the time depends on the number of leading zeros.
    static func minimalBigEndian(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.drop { $0 == 0 })
    }

    /// Big-endian bytes (at most 128) as 16 little-endian limbs.
    private static func limbs(bigEndian bytes: [UInt8]) -> [UInt64] {
        precondition(bytes.count <= byteCount)
        var limbs = [UInt64](repeating: 0, count: Montgomery1024.limbCount)
        for (i, byte) in bytes.reversed().enumerated() {
            limbs[i / 8] |= UInt64(byte) << (8 * UInt64(i % 8))
        }
        return limbs
    }

    /// `a < b` for public numbers.
    private static func less(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        for j in stride(from: Montgomery1024.limbCount - 1, through: 0, by: -1) where a[j] != b[j] {
            return a[j] < b[j]
        }
        return false
    }
}
