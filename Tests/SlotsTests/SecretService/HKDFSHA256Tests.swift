import Testing
@testable import SecretService
@testable import Slots

/// HKDF-SHA256 pinned by RFC 5869's test vectors (Appendix A).
@Suite("HKDFSHA256")
struct HKDFSHA256Tests {
    static var inputKey: SecretBytes { .test([UInt8](repeating: 0x0b, count: 22)) }

    /// A.1: basic test case.
    @Test func matchesRFC5869TestCase1() {
        let salt = bytes(hex: "000102030405060708090a0b0c")
        let info = bytes(hex: "f0f1f2f3f4f5f6f7f8f9")
        let prk = HKDFSHA256.extract(salt: salt, inputKey: Self.inputKey)
        #expect(hex(prk.testBytes) == "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
        let okm = HKDFSHA256.deriveKey(count: 42, inputKey: Self.inputKey, salt: salt, info: info)
        #expect(hex(okm.testBytes) ==
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    /// A.3: zero-length salt and info, which is what the Secret Service uses.
    @Test func matchesRFC5869TestCase3WithoutSaltOrInfo() {
        let prk = HKDFSHA256.extract(salt: [], inputKey: Self.inputKey)
        #expect(hex(prk.testBytes) == "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04")
        let okm = HKDFSHA256.deriveKey(count: 42, inputKey: Self.inputKey)
        #expect(hex(okm.testBytes) ==
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test func aShortKeyIsThePrefixOfALongerOne() {
        let short = HKDFSHA256.deriveKey(count: 16, inputKey: Self.inputKey)
        let long = HKDFSHA256.deriveKey(count: 42, inputKey: Self.inputKey)
        #expect(short.testBytes == Array(long.testBytes.prefix(16)))
    }

    @Test func anEmptySaltIsThirtyTwoZeroBytes() {
        let empty = HKDFSHA256.extract(salt: [], inputKey: Self.inputKey)
        let zeros = HKDFSHA256.extract(salt: [UInt8](repeating: 0, count: 32), inputKey: Self.inputKey)
        #expect(empty.constantTimeEquals(zeros))
    }
}
