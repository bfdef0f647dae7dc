import Testing
@testable import Slots

/// AES-128 pinned by FIPS 197's own example, and its computed S-box against the published table.
@Suite("AES128")
struct AES128Tests {
    /// FIPS 197 Figure 7, row by row: S(0x00) … S(0xff).
    static let sBoxHex =
        "637c777bf26b6fc53001672bfed7ab76ca82c97dfa5947f0add4a2af9ca472c0" +
        "b7fd9326363ff7cc34a5e5f171d8311504c723c31896059a071280e2eb27b275" +
        "09832c1a1b6e5aa0523bd6b329e32f8453d100ed20fcb15b6acbbe394a4c58cf" +
        "d0efaafb434d338545f9027f503c9fa851a3408f929d38f5bcb6da2110fff3d2" +
        "cd0c13ec5f974417c4a77e3d645d197360814fdc222a908846eeb814de5e0bdb" +
        "e0323a0a4906245cc2d3ac629195e479e7c8376d8dd54ea96c56f4ea657aae08" +
        "ba78252e1ca6b4c6e8dd741f4bbd8b8a703eb5664803f60e613557b986c11d9e" +
        "e1f8981169d98e949b1e87e9ce5528df8ca1890dbfe6426841992d0fb054bb16"

    /// The 256 bytes 0…255 sent through `transform` sixteen at a time.
    static func applied(_ transform: (UInt64, UInt64) -> (UInt64, UInt64), to input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for chunk in stride(from: 0, to: input.count, by: 16) {
            let block = Array(input[chunk..<chunk + 16])
            let low = block[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            let high = block[8..<16].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            let (l, h) = transform(low, high)
            out += (0..<8).map { UInt8(truncatingIfNeeded: l >> (8 * $0)) }
            out += (0..<8).map { UInt8(truncatingIfNeeded: h >> (8 * $0)) }
        }
        return out
    }

    @Test func computedSBoxMatchesThePublishedTable() {
        let all = (0...255).map { UInt8($0) }
        #expect(hex(Self.applied(AESSBox.substitute, to: all)) == Self.sBoxHex)
    }

    @Test func inverseSBoxUndoesTheSBox() {
        let all = (0...255).map { UInt8($0) }
        #expect(Self.applied(AESSBox.inverseSubstitute, to: bytes(hex: Self.sBoxHex)) == all)
    }

    /// FIPS 197 Appendix C.1, AES-128.
    static let key = "000102030405060708090a0b0c0d0e0f"
    static let plaintext = "00112233445566778899aabbccddeeff"
    static let ciphertext = "69c4e0d86a7b0430d8cdb78070b4c55a"

    @Test func encryptsTheFIPS197AppendixC1Block() {
        let aes = AES128(key: .test(bytes(hex: Self.key)))
        var block = bytes(hex: Self.plaintext)
        block.withUnsafeMutableBytes { aes.encryptBlock($0.baseAddress!) }
        #expect(hex(block) == Self.ciphertext)
    }

    @Test func decryptsTheFIPS197AppendixC1Block() {
        let aes = AES128(key: .test(bytes(hex: Self.key)))
        var block = bytes(hex: Self.ciphertext)
        block.withUnsafeMutableBytes { aes.decryptBlock($0.baseAddress!) }
        #expect(hex(block) == Self.plaintext)
    }

    @Test func decryptionUndoesEncryptionUnderAnyKey() {
        for _ in 0..<20 {
            let aes = AES128(key: SecretBytes.random(count: 16))
            let original = Sodium.randomPublic(count: 16)
            var block = original
            block.withUnsafeMutableBytes { aes.encryptBlock($0.baseAddress!) }
            #expect(block != original)
            block.withUnsafeMutableBytes { aes.decryptBlock($0.baseAddress!) }
            #expect(block == original)
        }
    }
}
