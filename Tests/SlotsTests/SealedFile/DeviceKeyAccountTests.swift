#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Slots

/// A protected vault's device key is made for its account (issue 36, point 1): the key that seals its slots
/// is derived from the account's id too, so another account with the same uid opens nothing even where the
/// gate's record check is passed; a key from before the binding keeps opening.
@Suite("DeviceKeyAccount")
struct DeviceKeyAccountTests {
    static let erin = DeviceKeyAccount(id: String(repeating: "e1", count: 32))
    static let frank = DeviceKeyAccount(id: String(repeating: "f2", count: 32))

    func slot(_ state: StateFolder, _ account: DeviceKeyAccount?) -> SealedFileSlot {
        SealedFileSlot(folder: state.path, machine: hereMachine, account: account)
    }

    @Test func aKeyMadeForAnAccountSaysSoAndOpensForItOnly() throws {
        try withStateFolder { state throws in
            try slot(state, Self.erin).write(.test("bank"), .test(secretMarker))
            let file = try rawBytes(state.deviceKeyPath)
            #expect(file.count == 72 && Array(file[0..<8]) == Array("VCTLKEY".utf8) + [2], "\(file.count)")
            #expect(Array(file[8..<24]) == hereMachine.tag && Array(file[24..<40]) == Self.erin.tag)
            #expect(try slot(state, Self.erin).read(.test("bank")).testBytes == Array(secretMarker.utf8))

            // Another account: refused at the key, in the look before a prompt and at the read, and nothing
            // it writes lands.
            let before = try rawBytes(state.slotPath("bank"))
            let frank = slot(state, Self.frank)
            guard case .unknown(let seen) = frank.holding(.test("bank")) else { Issue.record("expected unknown"); return }
            #expect(seen.path == state.deviceKeyPath && "\(seen)".contains("made for another account"), "\(seen)")
            #expect(refusal(frank, .test("bank"))?.path == state.deviceKeyPath)
            #expect(failure { try frank.write(.test("bank"), .test("frank's")) }?.isTampered == true)
            #expect(failure { try frank.write(.test("new"), .test("frank's")) }?.isTampered == true)
            #expect(try rawBytes(state.slotPath("bank")) == before && !exists(state.slotPath("new")))

            // Without an account (the file copied to a state folder): refused, and said why.
            let loose = refusal(slot(state, nil), .test("bank"))
            #expect(loose?.path == state.deviceKeyPath && "\(String(describing: loose))".contains("opens only through the gate"))
        }
    }

    /// With the account's tag in the header forged to the other account's, the derived key still differs:
    /// the tag only gives the words, the id itself binds.
    @Test func aForgedTagOpensNothing() throws {
        try withStateFolder { state throws in
            try slot(state, Self.erin).write(.test("bank"), .test(secretMarker))
            var file = try rawBytes(state.deviceKeyPath)
            file.replaceSubrange(24..<40, with: Self.frank.tag)
            try overwrite(state.deviceKeyPath, with: file)
            let error = refusal(slot(state, Self.frank), .test("bank"))
            #expect(error?.isTampered == true && error?.path == state.slotPath("bank"), "\(String(describing: error))")
        }
    }

    @Test func theDerivedKeyDependsOnTheAccount() {
        let random = SecretBytes.test("0123456789abcdef0123456789abcdef")
        let none = DeviceKey(testRandom: random, machine: hereMachine).key
        let erin = DeviceKey(testRandom: random, machine: hereMachine, account: Self.erin).key
        let frank = DeviceKey(testRandom: random, machine: hereMachine, account: Self.frank).key
        #expect(!none.constantTimeEquals(erin) && !erin.constantTimeEquals(frank) && !none.constantTimeEquals(frank))
        #expect(erin.constantTimeEquals(DeviceKey(testRandom: random, machine: hereMachine, account: Self.erin).key))
        // The TPM-sealed key's pair likewise: the unsealed seed alone does not make it.
        let seed = SecretBytes.test("fedcba9876543210fedcba9876543210")
        let plain = TPMDeviceKey.keyPair(seed: seed, account: nil).publicKey
        let forErin = TPMDeviceKey.keyPair(seed: seed, account: Self.erin).publicKey
        #expect(plain == Sodium.boxKeyPair(seed: seed).publicKey && forErin != plain)
        #expect(forErin != TPMDeviceKey.keyPair(seed: seed, account: Self.frank).publicKey)
    }

    /// A vault from before the binding (version 1 key) keeps opening and writing with the account given, and
    /// keeps its key.
    @Test func aKeyFromBeforeTheBindingKeepsWorking() throws {
        try withStateFolder { state throws in
            try slot(state, nil).write(.test("old"), .test(secretMarker))
            let key = try rawBytes(state.deviceKeyPath)
            #expect(key.count == 56)
            let bound = slot(state, Self.erin)
            #expect(try bound.read(.test("old")).testBytes == Array(secretMarker.utf8))
            try bound.write(.test("new"), .test("y"))
            #expect(try bound.read(.test("new")).testBytes == Array("y".utf8))
            #expect(try rawBytes(state.deviceKeyPath) == key)
        }
    }

    /// The TPM-sealed key file names its account the same way; its blobs are only looked at for their sizes
    /// here (no TPM is asked to load a key's public parts).
    @Test func aTPMKeyFileMadeForAnAccountIsRefusedToAnother() throws {
        try withStateFolder { state throws in
            try SecureFile.ensurePrivateFolder(state.path)
            let blob: [UInt8] = [0, 1, 9, 0, 2, 9, 9, 0, 1, 9]
            let publicKey = TPMDeviceKey.keyPair(seed: .random(count: 32), account: Self.erin).publicKey
            let path = "\(state.path)/\(TPMDeviceKey.fileName)"
            try SecureFile.write(path, TPMDeviceKey.accountMagic + hereMachine.tag + Self.erin.tag + publicKey + blob)
            let loaded = try #require(try TPMDeviceKey.load(folder: state.path, machine: hereMachine, account: Self.erin))
            #expect(loaded.publicKey == publicKey && loaded.blob == blob && loaded.account?.tag == Self.erin.tag)
            let other = failure { try TPMDeviceKey.load(folder: state.path, machine: hereMachine, account: Self.frank) }
            #expect(other?.path == path && "\(String(describing: other))".contains("made for another account"))
            let none = failure { try TPMDeviceKey.load(folder: state.path, machine: hereMachine) }
            #expect(none?.path == path && "\(String(describing: none))".contains("opens only through the gate"))
            // A key from before the binding loads for an account too, as one not made for it.
            try overwrite(path, with: TPMDeviceKey.magic + hereMachine.tag + publicKey + blob)
            let old = try #require(try TPMDeviceKey.load(folder: state.path, machine: hereMachine, account: Self.erin))
            #expect(old.account == nil && old.publicKey == publicKey)
        }
    }
}
