#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Slots

/// The device slot refuses any file that is not exactly what it wrote, for this slot, on this machine,
/// and never hands out plaintext from one.
@Suite("SealedFileSlot tampering")
struct SealedFileSlotTamperTests {
    static let name = SlotName.test("k")
    /// Header of a sealed file for "k": 8 + 1 + 16 + 1 + 1 + 24.
    static let headerCount = 51

    /// Writes the marker secret to "k" and returns the sealed file's bytes.
    static func sealedFile(in state: StateFolder) throws -> [UInt8] {
        try state.slot().write(name, .test(secretMarker))
        let file = try rawBytes(state.slotPath("k"))
        try #require(file.count == headerCount + secretMarker.utf8.count + 16)
        return file
    }

    @Test func flippedByteAnywhereInNonceCiphertextOrTagIsTampered() throws {
        try withStateFolder { state throws in
            let original = try Self.sealedFile(in: state)
            let slot = state.slot()
            for index in Self.headerCount - 24..<original.count {
                for flip: UInt8 in [0x01, 0x80] {
                    var bad = original
                    bad[index] ^= flip
                    try overwrite(state.slotPath("k"), with: bad)
                    let error = refusal(slot, Self.name)
                    #expect(error?.isTampered == true, "byte \(index) ^ \(flip): \(String(describing: error))")
                    #expect(error?.path == state.slotPath("k"))
                }
            }
            try overwrite(state.slotPath("k"), with: original)
            #expect(try slot.read(Self.name).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func flippedByteInTheMagicIsTampered() throws {
        try withStateFolder { state throws in
            let original = try Self.sealedFile(in: state)
            for index in 0..<8 {
                var bad = original
                bad[index] ^= 0x20
                try overwrite(state.slotPath("k"), with: bad)
                let error = refusal(state.slot(), Self.name)
                #expect(error?.isTampered == true, "byte \(index): \(String(describing: error))")
                #expect(state.slot().holding(Self.name) == .unknown(error ?? .empty(Self.name)))
            }
        }
    }

    /// Version 2 (the TPM-sealed key's format) is a known version: a version 1 file relabelled 2 is read
    /// with that layout and refused, never opened.
    @Test func versionOneRelabelledTwoIsTampered() throws {
        try withStateFolder { state throws in
            var file = try Self.sealedFile(in: state)
            file[8] = 2
            try overwrite(state.slotPath("k"), with: file)
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isTampered == true, "\(String(describing: error))")
        }
    }

    @Test(arguments: [0, 3, 0x7f, 0xff] as [UInt8])
    func unknownVersionIsTampered(_ version: UInt8) throws {
        try withStateFolder { state throws in
            var file = try Self.sealedFile(in: state)
            file[8] = version
            try overwrite(state.slotPath("k"), with: file)
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isTampered == true)
            #expect(error.map(SlotErrorText.describe)?.contains("version \(version)") == true)
        }
    }

    @Test func truncatedFileIsTamperedAtEveryLength() throws {
        try withStateFolder { state throws in
            let original = try Self.sealedFile(in: state)
            for count in 0..<original.count {
                try overwrite(state.slotPath("k"), with: Array(original.prefix(count)))
                let error = refusal(state.slot(), Self.name)
                #expect(error?.isTampered == true, "\(count) bytes: \(String(describing: error))")
            }
        }
    }

    @Test func trailingGarbageIsTampered() throws {
        try withStateFolder { state throws in
            let original = try Self.sealedFile(in: state)
            try overwrite(state.slotPath("k"), with: original + [0])
            #expect(refusal(state.slot(), Self.name)?.isTampered == true)
        }
    }

    @Test func fileLargerThanAnySealedFileIsTampered() throws {
        try withStateFolder { state throws in
            let original = try Self.sealedFile(in: state)
            let huge = original + [UInt8](repeating: 0x41, count: SealedFileFormat.maximumFileCount)
            try overwrite(state.slotPath("k"), with: huge)
            #expect(refusal(state.slot(), Self.name)?.isTampered == true)
        }
    }

    @Test func fileRenamedToAnotherSlotSaysWrongSlot() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("a"), .test(secretMarker))
            try slot.write(.test("b"), .test("b's own value"))
            #expect(rename(state.slotPath("a"), state.slotPath("b")) == 0)
            let error = refusal(slot, .test("b"))
            #expect(error == .wrongSlot(path: state.slotPath("b"), belongsTo: "a"))
            // A file that is there but not ours to open is neither a value nor "empty".
            #expect(slot.holding(.test("b")) == .unknown(.wrongSlot(path: state.slotPath("b"), belongsTo: "a")))
            #expect(slot.holding(.test("a")) == .empty)
        }
    }

    @Test func fileCopiedToANewSlotNameSaysWrongSlot() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("a"), .test(secretMarker))
            try makeFile(state.slotPath("c"), try rawBytes(state.slotPath("a")))
            #expect(refusal(slot, .test("c")) == .wrongSlot(path: state.slotPath("c"), belongsTo: "a"))
            #expect(try slot.read(.test("a")).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func flippedMachineTagSaysForeignMachine() throws {
        try withStateFolder { state throws in
            var file = try Self.sealedFile(in: state)
            file[12] ^= 0x01
            try overwrite(state.slotPath("k"), with: file)
            #expect(refusal(state.slot(), Self.name) == .foreignMachine(path: state.slotPath("k")))
        }
    }

    @Test func slotFromAnotherMachineSaysForeignMachine() throws {
        try withStateFolder { state throws in
            try state.slot(hereMachine).write(Self.name, .test(secretMarker))
            let there = state.slot(otherMachine)
            #expect(refusal(there, Self.name) == .foreignMachine(path: state.slotPath("k")))
            #expect(there.holding(Self.name) == .unknown(.foreignMachine(path: state.slotPath("k"))))
            #expect(try there.names() == [Self.name])
            #expect(try state.slot(hereMachine).read(Self.name).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func slotFileCopiedFromAnotherMachineSaysForeignMachine() throws {
        try withStateFolder { there throws in
            try withStateFolder { here throws in
                try there.slot(otherMachine).write(Self.name, .test(secretMarker))
                try here.slot(hereMachine).write(.test("mine"), .test("x"))
                try makeFile(here.slotPath("k"), try rawBytes(there.slotPath("k")))
                #expect(refusal(here.slot(hereMachine), Self.name) == .foreignMachine(path: here.slotPath("k")))
            }
        }
    }

    @Test func holdingReportsHeaderLevelDamageAsUnknown() throws {
        try withStateFolder { state throws in
            try overwriteWithGarbage(state)
            guard case .unknown(let error) = state.slot().holding(Self.name) else {
                Issue.record("expected .unknown")
                return
            }
            #expect(error.isTampered)
        }
    }

    private func overwriteWithGarbage(_ state: StateFolder) throws {
        _ = try Self.sealedFile(in: state)
        try overwrite(state.slotPath("k"), with: Array("not a sealed file at all, just text\n".utf8))
    }
}
