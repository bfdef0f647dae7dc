#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Slots

/// The device key file: made once, reused, bound to this machine.
@Suite("DeviceKey")
struct DeviceKeyTests {
    @Test func firstWriteCreatesTheKeyFile() throws {
        try withStateFolder { state throws in
            #expect(!exists(state.deviceKeyPath))
            try state.slot().write(.test("k"), .test("x"))
            let file = try rawBytes(state.deviceKeyPath)
            #expect(file.count == 56)
            #expect(Array(file[0..<8]) == Array("VCTLKEY".utf8) + [1])
            #expect(Array(file[8..<24]) == hereMachine.tag)
            #expect(try permissions(state.deviceKeyPath) == 0o600)
        }
    }

    @Test func keyFileIsCreatedOnceAndReused() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("a"), .test("1"))
            let first = try rawBytes(state.deviceKeyPath)
            let firstInode = try inode(state.deviceKeyPath)
            try slot.write(.test("b"), .test("2"))
            try state.slot().write(.test("a"), .test("3"))
            #expect(try rawBytes(state.deviceKeyPath) == first)
            #expect(try inode(state.deviceKeyPath) == firstInode)
            #expect(try slot.read(.test("a")).testBytes == Array("3".utf8))
            #expect(try slot.read(.test("b")).testBytes == Array("2".utf8))
        }
    }

    @Test func keysOfTwoFoldersDiffer() throws {
        try withStateFolder { one throws in
            try withStateFolder { two throws in
                try one.slot().write(.test("k"), .test("x"))
                try two.slot().write(.test("k"), .test("x"))
                #expect(try Array(rawBytes(one.deviceKeyPath)[24...]) != Array(rawBytes(two.deviceKeyPath)[24...]))
            }
        }
    }

    @Test func loadWithoutCreateFindsNothingInAnEmptyFolder() throws {
        try withTemporaryFolder { root throws in
            #expect(try DeviceKey.load(folder: root, machine: hereMachine, create: false) == nil)
            #expect(try allEntries(root).isEmpty)
        }
    }

    @Test func loadReturnsTheSameKeyItCreated() throws {
        try withTemporaryFolder { root throws in
            let made = try #require(try DeviceKey.load(folder: root, machine: hereMachine, create: true))
            let loaded = try #require(try DeviceKey.load(folder: root, machine: hereMachine, create: false))
            let again = try #require(try DeviceKey.load(folder: root, machine: hereMachine, create: true))
            #expect(made.key.constantTimeEquals(loaded.key))
            #expect(made.key.constantTimeEquals(again.key))
            #expect(made.key.count == Sodium.keyBytes)
            #expect(try allEntries(root) == ["device.key"])
        }
    }

    @Test func readWithoutTheKeySaysTamperedAtTheKeyPath() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            #expect(unlink(state.deviceKeyPath) == 0)
            let error = refusal(state.slot(), .test("k"))
            #expect(error?.isTampered == true)
            #expect(error?.path == state.deviceKeyPath)
        }
    }

    /// A lost key with sealed files left is not quietly replaced: a new key would orphan them for good.
    @Test func writeWithALostKeyAndSealedFilesLeftIsRefused() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("old"), .test(secretMarker))
            #expect(unlink(state.deviceKeyPath) == 0)
            let error = failure { try slot.write(.test("new"), .test("y")) }
            #expect(error?.isTampered == true)
            #expect(error?.path == state.deviceKeyPath)
            #expect(access(state.deviceKeyPath, F_OK) != 0, "no new key was made")
        }
    }

    @Test func keyFileFromAnotherMachineIsRefusedWhenWriting() throws {
        try withStateFolder { state throws in
            try state.slot(hereMachine).write(.test("k"), .test(secretMarker))
            let before = try rawBytes(state.slotPath("k"))
            let there = state.slot(otherMachine)
            #expect(failure { try there.write(.test("k"), .test("overwrite")) } == .foreignMachine(path: state.deviceKeyPath))
            #expect(failure { try there.write(.test("new"), .test("new")) } == .foreignMachine(path: state.deviceKeyPath))
            #expect(try rawBytes(state.slotPath("k")) == before)
            #expect(!exists(state.slotPath("new")))
        }
    }

    @Test(arguments: [0, 3, 7])
    func keyFileWithBadMagicIsTampered(_ index: Int) throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            var file = try rawBytes(state.deviceKeyPath)
            file[index] ^= 0x01
            try overwrite(state.deviceKeyPath, with: file)
            let error = refusal(state.slot(), .test("k"))
            #expect(error?.isTampered == true)
            #expect(error?.path == state.deviceKeyPath)
            expectHoldingRefusesTheKey(state)
            #expect(failure { try state.slot().write(.test("k"), .test("y")) }?.isTampered == true)
        }
    }

    @Test(arguments: [0, 1, 55, 57, 100])
    func keyFileOfWrongSizeIsTampered(_ count: Int) throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            let file = try rawBytes(state.deviceKeyPath)
            try overwrite(state.deviceKeyPath, with: Array((file + file).prefix(count)))
            let error = refusal(state.slot(), .test("k"))
            #expect(error?.isTampered == true)
            #expect(error?.path == state.deviceKeyPath)
            expectHoldingRefusesTheKey(state)
        }
    }

    /// `holding` (status, the look before a prompt) reads only the key's header, and still refuses a key
    /// that is damaged there or the wrong size.
    private func expectHoldingRefusesTheKey(_ state: StateFolder, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .unknown(let error) = state.slot().holding(.test("k")) else {
            Issue.record("expected .unknown", sourceLocation: sourceLocation)
            return
        }
        #expect(error.isTampered, "\(error)", sourceLocation: sourceLocation)
        #expect(error.path == state.deviceKeyPath, sourceLocation: sourceLocation)
    }

    @Test func holdingSaysAKeyFromAnotherMachineIsForeign() throws {
        try withStateFolder { there throws in
            try withStateFolder { here throws in
                try there.slot(otherMachine).write(.test("k"), .test(secretMarker))
                try here.slot(hereMachine).write(.test("k"), .test(secretMarker))
                try overwrite(here.deviceKeyPath, with: try rawBytes(there.deviceKeyPath))
                #expect(here.slot(hereMachine).holding(.test("k")) == .unknown(.foreignMachine(path: here.deviceKeyPath)))
            }
        }
    }

    @Test func flippedRandomByteInTheKeyFileMakesSlotsTampered() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            var file = try rawBytes(state.deviceKeyPath)
            file[40] ^= 0x80
            try overwrite(state.deviceKeyPath, with: file)
            let error = refusal(state.slot(), .test("k"))
            #expect(error?.isTampered == true)
            #expect(error?.path == state.slotPath("k"))
            // The trade-off of reading only the header before PAM: damage to the random bytes shows at the
            // read (after the prompt), not in the look before it.
            #expect(state.slot().holding(.test("k")) == .holds(locked: false))
        }
    }
}
