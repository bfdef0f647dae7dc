import Testing
@testable import Slots

/// The device slot against a real folder: what it stores, lists and removes.
@Suite("SealedFileSlot")
struct SealedFileSlotTests {
    static let binary: [UInt8] = [0x00, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0x00, 0xfe, 0x80, 0x7f, 0x20, 0x0a]

    @Test func readReturnsWrittenBinaryBytesExactly() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("bin"), .test(Self.binary))
            #expect(try slot.read(.test("bin")).testBytes == Self.binary)
        }
    }

    @Test func readReturnsOneByteSecret() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("one"), .test([0x00]))
            #expect(try slot.read(.test("one")).testBytes == [0x00])
        }
    }

    @Test func readReturnsSecretOfExactlyMaximumCount() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            let secret = SecretBytes.random(count: SecretBytes.maximumCount)
            try slot.write(.test("big"), secret)
            let back = try slot.read(.test("big"))
            #expect(back.count == 64 * 1024)
            #expect(back.constantTimeEquals(secret))
        }
    }

    @Test func readWorksForTheLongestName() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            let name = SlotName.test(String(repeating: "L", count: SlotName.maximumLength))
            try slot.write(name, .test(secretMarker))
            #expect(try slot.read(name).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func writeReplacesTheOldValue() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("k"), .test("first value, rather long"))
            try slot.write(.test("k"), .test("second"))
            #expect(try slot.read(.test("k")).testBytes == Array("second".utf8))
        }
    }

    @Test func slotFileNeverHoldsThePlaintext() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            let file = try rawBytes(state.slotPath("k"))
            #expect(!hex(file).contains(hex(Array(secretMarker.utf8))))
        }
    }

    @Test func writeRefusesEmptySecretAndWritesNothing() throws {
        try withStateFolder { state throws in
            let error = failure { try state.slot().write(.test("k"), SecretBytes(capacity: 8)) }
            #expect(error == .badSecretSize(0))
            #expect(!exists(state.path))
        }
    }

    @Test func writeRefusesSecretOverMaximumCountAndWritesNothing() throws {
        try withStateFolder { state throws in
            let error = failure { try state.slot().write(.test("k"), .random(count: SecretBytes.maximumCount + 1)) }
            #expect(error == .badSecretSize(64 * 1024 + 1))
            #expect(!exists(state.path))
        }
    }

    @Test func writeRefusingABadSizeKeepsTheOldValue() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("k"), .test("old"))
            let before = try rawBytes(state.slotPath("k"))
            #expect(failure { try slot.write(.test("k"), SecretBytes(capacity: 0)) } == .badSecretSize(0))
            #expect(try rawBytes(state.slotPath("k")) == before)
            #expect(try allEntries(state.slotsFolder) == ["k"])
        }
    }

    @Test func readOfMissingSlotSaysEmpty() throws {
        try withStateFolder { state throws in
            #expect(failure { try state.slot().read(.test("nothing")) } == .empty(.test("nothing")))
            try state.slot().write(.test("other"), .test("x"))
            #expect(failure { try state.slot().read(.test("nothing")) } == .empty(.test("nothing")))
        }
    }

    @Test func holdingIsEmptyBeforeAWriteAndHoldsAfter() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            #expect(slot.holding(.test("k")) == .empty)
            try slot.write(.test("other"), .test("x"))
            #expect(slot.holding(.test("k")) == .empty)
            try slot.write(.test("k"), .test(secretMarker))
            #expect(slot.holding(.test("k")) == .holds(locked: false))
        }
    }

    @Test func deleteReturnsTrueThenFalse() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("k"), .test("x"))
            #expect(try slot.delete(.test("k")))
            #expect(try !slot.delete(.test("k")))
            #expect(slot.holding(.test("k")) == .empty)
            #expect(failure { try slot.read(.test("k")) } == .empty(.test("k")))
            #expect(!exists(state.slotPath("k")))
        }
    }

    @Test func deleteWithoutStateFolderReturnsFalse() throws {
        try withStateFolder { state throws in
            #expect(try !state.slot().delete(.test("k")))
            #expect(!exists(state.path))
        }
    }

    @Test func deleteLeavesOtherSlotsAlone() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("a"), .test("A"))
            try slot.write(.test("b"), .test("B"))
            try slot.delete(.test("a"))
            #expect(try slot.read(.test("b")).testBytes == Array("B".utf8))
        }
    }

    @Test func namesIsEmptyWithoutStateFolder() throws {
        try withStateFolder { state throws in
            #expect(try state.slot().names().isEmpty)
            #expect(!exists(state.path))
        }
    }

    @Test func namesAreSortedAndSkipHiddenAndInvalidEntries() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            for raw in ["zeta", "alpha", "Beta", "m.n_o@p+q-1"] {
                try slot.write(.test(raw), .test("x"))
            }
            try makeFile("\(state.slotsFolder)/.tmp-1234-5678", [1, 2, 3])
            try makeFile("\(state.slotsFolder)/.hidden")
            try makeFile("\(state.slotsFolder)/-leading-dash")
            try makeFile("\(state.slotsFolder)/has space")
            try makeFile("\(state.slotsFolder)/caf\u{e9}")
            try makeFile("\(state.slotsFolder)/" + String(repeating: "n", count: 129))
            #expect(try slot.names().map(\.rawValue) == ["Beta", "alpha", "m.n_o@p+q-1", "zeta"])
        }
    }

    @Test func namesNeverIncludeTheDeviceKey() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test("x"))
            #expect(exists(state.deviceKeyPath))
            #expect(try state.slot().names() == [.test("k")])
        }
    }

    @Test func writeMakesPrivateFoldersAndFiles() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test("x"))
            #expect(try permissions(state.path) == 0o700)
            #expect(try permissions(state.slotsFolder) == 0o700)
            #expect(try permissions(state.deviceKeyPath) == 0o600)
            #expect(try permissions(state.slotPath("k")) == 0o600)
        }
    }

    @Test func writeMakesMissingParentsOfTheStateFolderPrivate() throws {
        try withTemporaryFolder { root throws in
            let folder = "\(root)/a/b/vaultctl"
            let slot = SealedFileSlot(folder: folder, machine: hereMachine)
            try slot.write(.test("k"), .test("x"))
            #expect(try permissions("\(root)/a") == 0o700)
            #expect(try permissions("\(root)/a/b") == 0o700)
            #expect(try permissions(folder) == 0o700)
            #expect(try slot.read(.test("k")).testBytes == Array("x".utf8))
        }
    }

    @Test func writeLeavesNoTemporaryFiles() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("a"), .test("1"))
            try slot.write(.test("a"), .test("2"))
            try slot.write(.test("b"), .test("3"))
            #expect(try allEntries(state.slotsFolder) == ["a", "b"])
            #expect(try allEntries(state.path) == ["device.key", "slots"])
        }
    }

    @Test func anotherInstanceOnTheSameFolderReadsTheSecret() throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("k"), .test(secretMarker))
            let fresh = SealedFileSlot(folder: state.path, machine: MachineIdentity(id: hereMachine.id))
            #expect(try fresh.read(.test("k")).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func modeIsDevice() {
        #expect(SealedFileSlot(folder: "/nonexistent", machine: hereMachine).mode == .device)
    }
}
