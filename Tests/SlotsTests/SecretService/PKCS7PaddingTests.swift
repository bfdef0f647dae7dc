import Testing
@testable import SecretService
@testable import Slots

/// PKCS#7 padding of the Secret Service session: always 1…16 bytes, each the pad length; anything else in a
/// decrypted last block is refused.
@Suite("PKCS7Padding")
struct PKCS7PaddingTests {
    @Test(arguments: [(0, 16), (1, 15), (15, 1), (16, 16), (17, 15), (31, 1)])
    func padCountFillsTheLastBlock(_ count: Int, _ pad: Int) {
        #expect(PKCS7Padding.padCount(for: count) == pad)
    }

    @Test(arguments: 1...16)
    func everyValidPadIsAccepted(_ pad: Int) {
        let block = [UInt8](repeating: 0xAA, count: 16 - pad) + [UInt8](repeating: UInt8(pad), count: pad)
        #expect(block.withUnsafeBytes { PKCS7Padding.validPadding($0) } == pad)
    }

    @Test(arguments: [0, 17, 32, 255])
    func aPadLengthOutOfRangeIsRefused(_ last: Int) {
        let block = [UInt8](repeating: UInt8(last), count: 16)
        #expect(block.withUnsafeBytes { PKCS7Padding.validPadding($0) } == 0)
    }

    /// The last byte says 4, but one of the four bytes differs.
    @Test(arguments: 12...14)
    func aMismatchingPadByteIsRefused(_ position: Int) {
        var block = [UInt8](repeating: 0x11, count: 12) + [4, 4, 4, 4]
        block[position] = 5
        #expect(block.withUnsafeBytes { PKCS7Padding.validPadding($0) } == 0)
    }
}
