import Testing
@testable import Slots

/// CBC chaining pinned by NIST SP 800-38A, and PKCS#7 padding as libsecret writes and checks it.
@Suite("AESCBC")
struct AESCBCTests {
    /// NIST SP 800-38A F.2.1 / F.2.2, CBC-AES128.
    static let key = "2b7e151628aed2a6abf7158809cf4f3c"
    static let iv = bytes(hex: "000102030405060708090a0b0c0d0e0f")
    static let plaintext =
        "6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51" +
        "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710"
    static let ciphertext =
        "7649abac8119b246cee98e9b12e9197d" + "5086cb9b507219ee95db113a917678b2" +
        "73bed6b8e3c1743b7116e69e22229516" + "3ff1caa1681fac09120eca307586e1a7"
    /// The fifth block of the same chain when the 64 bytes are padded: E(16 × 0x10 ⊕ the fourth block).
    /// Computed once with Python's `cryptography` (OpenSSL).
    static let paddingBlock = "8cb82807230e1321d3fae00d18cc2012"

    static func cipher() -> AES128 { AES128(key: .test(bytes(hex: key))) }

    @Test func chainsLikeSP800_38A_F21Encrypt() {
        var blocks = bytes(hex: Self.plaintext)
        Self.iv.withUnsafeBytes { iv in
            blocks.withUnsafeMutableBytes { AESCBC.encryptBlocks($0, iv: iv, cipher: Self.cipher()) }
        }
        #expect(hex(blocks) == Self.ciphertext)
    }

    @Test func chainsLikeSP800_38A_F22Decrypt() {
        let input = bytes(hex: Self.ciphertext)
        var blocks = input
        Self.iv.withUnsafeBytes { iv in
            input.withUnsafeBytes { c in
                blocks.withUnsafeMutableBytes { AESCBC.decryptBlocks($0, iv: iv, ciphertext: c, cipher: Self.cipher()) }
            }
        }
        #expect(hex(blocks) == Self.plaintext)
    }

    @Test func aMultipleOf16GetsAWholeBlockOfPadding() {
        let sealed = AESCBC.encrypt(.test(bytes(hex: Self.plaintext)), iv: Self.iv, cipher: Self.cipher())
        #expect(hex(sealed) == Self.ciphertext + Self.paddingBlock)
    }

    @Test func decryptionRemovesTheWholePaddingBlock() throws {
        let sealed = bytes(hex: Self.ciphertext + Self.paddingBlock)
        let plain = try #require(sealed.withUnsafeBytes { AESCBC.decrypt($0, iv: Self.iv, cipher: Self.cipher()) })
        #expect(hex(plain.testBytes) == Self.plaintext)
    }

    @Test(arguments: [(0, 16), (1, 16), (15, 16), (16, 32), (17, 32), (31, 32), (32, 48)])
    func paddingAlwaysAddsOneToSixteenBytes(length: Int, sealedLength: Int) throws {
        let secret = SecretBytes.test([UInt8](repeating: 0x41, count: length))
        let sealed = AESCBC.encrypt(secret, iv: Self.iv, cipher: Self.cipher())
        #expect(sealed.count == sealedLength)
        let plain = try #require(sealed.withUnsafeBytes { AESCBC.decrypt($0, iv: Self.iv, cipher: Self.cipher()) })
        #expect(plain.testBytes == secret.testBytes)
    }

    @Test(arguments: 1...16)
    func everyPadLengthIsAccepted(padCount: Int) {
        let block = [UInt8](repeating: 0xEE, count: 16 - padCount) + [UInt8](repeating: UInt8(padCount), count: padCount)
        #expect(block.withUnsafeBytes { AESCBC.validPadding($0) } == padCount)
    }

    @Test(arguments: [
        [UInt8](repeating: 0xEE, count: 15) + [0x00],                        // pad length 0
        [UInt8](repeating: 0x11, count: 16),                                 // pad length 17
        [UInt8](repeating: 0xFF, count: 16),                                 // pad length 255
        [UInt8](repeating: 0xEE, count: 13) + [0x03, 0x02, 0x03],            // a pad byte differs
        [0x0F] + [UInt8](repeating: 0x10, count: 15),                        // the first of 16 differs
        [UInt8](repeating: 0xEE, count: 14) + [0x03, 0x03],                  // too few pad bytes
    ])
    func malformedPaddingIsRefused(block: [UInt8]) {
        #expect(block.withUnsafeBytes { AESCBC.validPadding($0) } == 0)
    }

    @Test(arguments: [0, 1, 15, 17, 31])
    func ciphertextThatIsNotWholeBlocksIsRefused(length: Int) {
        let value = [UInt8](repeating: 0, count: length)
        #expect(value.withUnsafeBytes { AESCBC.decrypt($0, iv: Self.iv, cipher: Self.cipher()) } == nil)
    }

    @Test(arguments: [0, 8, 15, 17, 32])
    func anIVThatIsNotOneBlockIsRefused(length: Int) {
        let sealed = bytes(hex: Self.ciphertext + Self.paddingBlock)
        let iv = [UInt8](repeating: 0, count: length)
        #expect(sealed.withUnsafeBytes { AESCBC.decrypt($0, iv: iv, cipher: Self.cipher()) } == nil)
    }
}
