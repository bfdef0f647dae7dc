import Testing
@testable import Slots

/// The sealed-file format, version 1, pinned by a known-answer vector.
///
/// The vector was computed once and cross-checked against a standalone C program that calls libsodium
/// directly (`crypto_generichash` for the machine tag and key, `crypto_aead_xchacha20poly1305_ietf_encrypt`
/// for the body) following the layout in `SealedFileFormat.swift` and `DeviceKey.swift`. Any change to the
/// format, the tag or the key derivation fails these tests: bump the version instead.
@Suite("SealedFileFormat")
struct SealedFileFormatTests {
    // MARK: - The vector

    /// Device key random bytes 0x00…0x1f.
    static let random: [UInt8] = Array(0..<32)
    /// Nonce 0x40…0x57.
    static let nonce: [UInt8] = Array(0x40..<0x58)
    static let name = SlotName.test("kat")
    static let plaintext = "known answer"

    static let machineTagHex = "5d0c3703074061e3f6d848364f9639a5"
    static let derivedKeyHex = "5315980bbd94437e7a518b9a9f1d79758841317011631f120c593ee71b406b8d"
    static let sealedHex =
        "5643544c5345414c" + "01" + machineTagHex + "03" + "6b6174" +
        "404142434445464748494a4b4c4d4e4f5051525354555657" +
        "867ee03dac6b08e9ac505e6e" +             // ciphertext of "known answer"
        "49096c4a35ffffaadba494d2b2850840"       // Poly1305 tag

    static func key() -> SecretBytes {
        DeviceKey(testRandom: .test(random), machine: hereMachine).key
    }

    @Test func machineTagMatchesKnownAnswer() {
        #expect(hex(hereMachine.tag) == Self.machineTagHex)
    }

    @Test func derivedKeyMatchesKnownAnswer() {
        #expect(hex(Self.key().testBytes) == Self.derivedKeyHex)
    }

    @Test func derivedKeyDependsOnTheMachine() {
        let here = DeviceKey(testRandom: .test(Self.random), machine: hereMachine).key
        let there = DeviceKey(testRandom: .test(Self.random), machine: otherMachine).key
        #expect(!here.constantTimeEquals(there))
    }

    @Test func sealMatchesKnownAnswer() {
        let sealed = SealedFileFormat.seal(.test(Self.plaintext), name: Self.name, machineTag: hereMachine.tag,
                                           key: Self.key(), nonce: Self.nonce)
        #expect(hex(sealed) == Self.sealedHex)
        #expect(sealed.count == 81)
    }

    @Test func openRecoversKnownAnswerPlaintext() throws {
        let file = SecretBytes.test(bytes(hex: Self.sealedHex))
        let plain = try SealedFileFormat.open(file, name: Self.name, machineTag: hereMachine.tag, key: Self.key(),
                                              path: "/kat")
        #expect(plain.testBytes == Array(Self.plaintext.utf8))
    }

    // MARK: - Header layout

    @Test func headerLayoutIsMagicVersionTagNameLengthNameNonce() {
        let tag = hereMachine.tag
        let head = SealedFileFormat.header(name: Self.name, machineTag: tag, nonce: Self.nonce)
        #expect(head.count == 8 + 1 + 16 + 1 + 3 + 24)
        #expect(Array(head[0..<8]) == Array("VCTLSEAL".utf8))
        #expect(head[8] == 1)
        #expect(Array(head[9..<25]) == tag)
        #expect(head[25] == 3)
        #expect(Array(head[26..<29]) == Array("kat".utf8))
        #expect(Array(head[29..<53]) == Self.nonce)
    }

    @Test func sealedFileIsHeaderThenCiphertextAndTag() {
        let head = SealedFileFormat.header(name: Self.name, machineTag: hereMachine.tag, nonce: Self.nonce)
        let sealed = SealedFileFormat.seal(.test(Self.plaintext), name: Self.name, machineTag: hereMachine.tag,
                                           key: Self.key(), nonce: Self.nonce)
        #expect(Array(sealed[0..<head.count]) == head)
        #expect(sealed.count == head.count + Self.plaintext.utf8.count + Sodium.tagBytes)
        #expect(!hex(sealed).contains(hex(Array(Self.plaintext.utf8))))
    }

    @Test func headerOfLongestNameRecordsItsLength() {
        let long = SlotName.test(String(repeating: "n", count: SlotName.maximumLength))
        let head = SealedFileFormat.header(name: long, machineTag: hereMachine.tag, nonce: Self.nonce)
        #expect(head[25] == UInt8(SlotName.maximumLength))
        #expect(head.count == 26 + SlotName.maximumLength + 24)
    }

    @Test func parseHeaderReadsBackWhatHeaderWrote() throws {
        let sealed = bytes(hex: Self.sealedHex)
        let h = try sealed.withUnsafeBytes { (raw) throws(SlotError) in try SealedFileFormat.parseHeader(raw, path: "/kat") }
        #expect(h.machineTag == hereMachine.tag)
        #expect(h.name == "kat")
        #expect(h.nonce == Self.nonce)
        #expect(h.count == 53)
    }

    @Test func largestSecretWithLongestNameFillsMaximumFileCount() {
        let long = SlotName.test(String(repeating: "n", count: SlotName.maximumLength))
        let sealed = SealedFileFormat.seal(.random(count: SecretBytes.maximumCount), name: long,
                                           machineTag: hereMachine.tag, key: Self.key())
        // Version 1 is the smaller: version 2 adds a key id and the sealed file key.
        #expect(sealed.count + 16 + SealedFileFormat.wrappedKeyCount == SealedFileFormat.maximumFileCount)
        let v2 = SealedFileFormat.seal(.random(count: SecretBytes.maximumCount), name: long,
                                       machineTag: hereMachine.tag, to: Self.tpmKey().key)
        #expect(v2.count == SealedFileFormat.maximumFileCount)
    }

    // MARK: - Version 2: sealed to the TPM-sealed key's public key

    /// A TPM-sealed key's public parts with its secret key (no TPM: the seed is made here).
    static func tpmKey() -> (key: TPMDeviceKey, secretKey: SecretBytes) {
        let pair = Sodium.boxKeyPair(seed: .random(count: 32))
        return (TPMDeviceKey(path: "/state/device.tpm2", publicKey: pair.publicKey, blob: [], account: nil), pair.secretKey)
    }

    @Test func versionTwoOpensWithItsSecretKeyOnly() throws {
        let (key, secretKey) = Self.tpmKey()
        let sealed = SealedFileFormat.seal(.test(Self.plaintext), name: Self.name, machineTag: hereMachine.tag, to: key)
        #expect(sealed[8] == 2 && Array(sealed[25..<41]) == key.keyID, "the header names its key")
        let opened = try sealed.withTypedUnsafeBytes { (raw) throws(SlotError) in
            try SealedFileFormat.open(raw, name: Self.name, machineTag: hereMachine.tag, key: key, secretKey: secretKey, path: "/p")
        }
        #expect(opened.testBytes == Array(Self.plaintext.utf8))
        // Another key pair (another TPM-sealed key) does not open it, and says which key it needs.
        let (other, otherSecret) = Self.tpmKey()
        let wrongKey = failure { try sealed.withTypedUnsafeBytes { (raw) throws(SlotError) in
            try SealedFileFormat.open(raw, name: Self.name, machineTag: hereMachine.tag, key: other, secretKey: otherSecret, path: "/p")
        } }
        #expect(wrongKey?.isTampered == true)
        // The version 1 opener refuses it (it is not under device.key).
        let v1 = failure { try sealed.withTypedUnsafeBytes { (raw) throws(SlotError) in
            try SealedFileFormat.open(raw, name: Self.name, machineTag: hereMachine.tag, key: Self.key(), path: "/p")
        } }
        #expect(v1?.isTampered == true)
        // Every changed byte (header, sealed file key, nonce, ciphertext) is refused.
        for index in stride(from: 0, to: sealed.count, by: 7) {
            var bad = sealed
            bad[index] ^= 0x01
            let e = failure { try bad.withTypedUnsafeBytes { (raw) throws(SlotError) in
                try SealedFileFormat.open(raw, name: Self.name, machineTag: hereMachine.tag, key: key, secretKey: secretKey, path: "/p")
            } }
            #expect(e != nil, "byte \(index) changed, yet it opened")
        }
    }

    // MARK: - Sealing and opening

    @Test func sealPicksAFreshNonceEachTime() throws {
        let a = SealedFileFormat.seal(.test(Self.plaintext), name: Self.name, machineTag: hereMachine.tag, key: Self.key())
        let b = SealedFileFormat.seal(.test(Self.plaintext), name: Self.name, machineTag: hereMachine.tag, key: Self.key())
        #expect(a != b)
        #expect(Array(a[29..<53]) != Array(b[29..<53]))
        for sealed in [a, b] {
            let plain = try SealedFileFormat.open(.test(sealed), name: Self.name, machineTag: hereMachine.tag,
                                                  key: Self.key(), path: "/kat")
            #expect(plain.testBytes == Array(Self.plaintext.utf8))
        }
    }

    @Test func openRefusesAnotherKey() {
        let other = DeviceKey(testRandom: .random(count: 32), machine: hereMachine).key
        let error = failure {
            try SealedFileFormat.open(.test(bytes(hex: Self.sealedHex)), name: Self.name, machineTag: hereMachine.tag,
                                      key: other, path: "/kat")
        }
        #expect(error?.isTampered == true)
        #expect(error?.path == "/kat")
    }

    @Test func openSaysWrongSlotForAnotherName() {
        let error = failure {
            try SealedFileFormat.open(.test(bytes(hex: Self.sealedHex)), name: .test("other"),
                                      machineTag: hereMachine.tag, key: Self.key(), path: "/kat")
        }
        #expect(error == .wrongSlot(path: "/kat", belongsTo: "kat"))
    }

    @Test func openSaysForeignMachineForAnotherTag() {
        let error = failure {
            try SealedFileFormat.open(.test(bytes(hex: Self.sealedHex)), name: Self.name,
                                      machineTag: otherMachine.tag, key: Self.key(), path: "/kat")
        }
        #expect(error == .foreignMachine(path: "/kat"))
    }

    @Test func openRefusesAFileWhoseHeaderWasRewrittenForAnotherSlot() {
        // Renaming inside the header (not just the file) is caught by the AEAD, which authenticates the header.
        var forged = bytes(hex: Self.sealedHex)
        forged[26..<29] = ArraySlice("dog".utf8)
        let error = failure {
            try SealedFileFormat.open(.test(forged), name: .test("dog"), machineTag: hereMachine.tag,
                                      key: Self.key(), path: "/dog")
        }
        #expect(error?.isTampered == true)
    }

    @Test(arguments: [0, 7, 8, 25, 26, 52, 53, 68])
    func parseHeaderSaysTamperedForShortInput(_ count: Int) {
        let sealed = Array(bytes(hex: Self.sealedHex).prefix(count))
        let error = failure {
            try sealed.withUnsafeBytes { (raw) throws(SlotError) in try SealedFileFormat.parseHeader(raw, path: "/kat") }
        }
        #expect(error?.isTampered == true)
    }
}
