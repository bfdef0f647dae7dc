#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Slots

/// The device slot refuses anything looser than 0700 folders and 0600 files owned by us, and symlinks.
///
/// These tests run as root here, and root can read a 0644 file anyway: they check vaultctl's own refusal,
/// not the kernel's.
@Suite("SealedFileSlot permissions")
struct SealedFileSlotPermissionTests {
    static let name = SlotName.test("k")

    /// Moves what is at `path` to `elsewhere` and puts a symlink to it at `path`.
    static func replaceWithSymlink(_ path: String, movingItTo elsewhere: String,
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(rename(path, elsewhere) == 0, sourceLocation: sourceLocation)
        #expect(symlink(elsewhere, path) == 0, sourceLocation: sourceLocation)
    }

    /// Expects every operation that looks at the state to refuse with `.unsafePermissions` for `path`.
    static func expectEverythingRefused(_ slot: SealedFileSlot, path: String,
                                        sourceLocation: SourceLocation = #_sourceLocation) {
        let read = refusal(slot, name, sourceLocation: sourceLocation)
        #expect(read?.isUnsafePermissions == true, "read: \(String(describing: read))", sourceLocation: sourceLocation)
        #expect(read?.path == path, sourceLocation: sourceLocation)
        let write = failure { try slot.write(name, .test("new value")) }
        #expect(write?.isUnsafePermissions == true, "write: \(String(describing: write))", sourceLocation: sourceLocation)
        #expect(write?.path == path, sourceLocation: sourceLocation)
        let names = failure { try slot.names() }
        #expect(names?.isUnsafePermissions == true, "names: \(String(describing: names))", sourceLocation: sourceLocation)
        let delete = failure { try slot.delete(name) }
        #expect(delete?.isUnsafePermissions == true, "delete: \(String(describing: delete))", sourceLocation: sourceLocation)
        guard case .unknown(let holding) = slot.holding(name) else {
            Issue.record("holding should be unknown", sourceLocation: sourceLocation)
            return
        }
        #expect(holding.isUnsafePermissions, sourceLocation: sourceLocation)
    }

    // MARK: - Slot files

    @Test(arguments: [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o666, 0o777] as [mode_t])
    func slotFileOpenToOthersIsRefusedAndNotRead(_ mode: mode_t) throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            try setPermissions(state.slotPath("k"), mode)
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isUnsafePermissions == true)
            #expect(error?.path == state.slotPath("k"))
            #expect(error.map(SlotErrorText.describe)?.contains(String(mode, radix: 8)) == true)
            guard case .unknown(let holding) = state.slot().holding(Self.name) else {
                Issue.record("holding should be unknown")
                return
            }
            #expect(holding.isUnsafePermissions)
            try setPermissions(state.slotPath("k"), 0o600)
            #expect(try state.slot().read(Self.name).testBytes == Array(secretMarker.utf8))
        }
    }

    @Test func symlinkedSlotFileIsRefused() throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            let elsewhere = "\(state.root)/elsewhere"
            Self.replaceWithSymlink(state.slotPath("k"), movingItTo: elsewhere)
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isUnsafePermissions == true)
            #expect(error?.path == state.slotPath("k"))
            #expect(error.map(SlotErrorText.describe)?.contains("symbolic link") == true)
            guard case .unknown(let holding) = state.slot().holding(Self.name) else {
                Issue.record("holding should be unknown")
                return
            }
            #expect(holding.isUnsafePermissions)
        }
    }

    /// What stands at a slot's path instead of a regular file.
    enum NotAFile: String, Sendable, CaseIterable {
        case folder
        /// `SecureFile.read` must not wait in `open(2)` for a writer before `fstat` can see that a FIFO is
        /// not a regular file (it opens with `O_NONBLOCK`).
        case fifo
    }

    @Test(arguments: NotAFile.allCases)
    func slotPathThatIsNotAFileIsRefused(_ kind: NotAFile) throws {
        try withStateFolder { state throws in
            try state.slot().write(.test("other"), .test("x"))
            switch kind {
            case .folder: #expect(mkdir(state.slotPath("k"), 0o700) == 0)
            case .fifo: #expect(mkfifo(state.slotPath("k"), 0o600) == 0)
            }
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isUnsafePermissions == true)
            #expect(error?.path == state.slotPath("k"))
        }
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give a file away"))
    func slotFileOwnedBySomeoneElseIsRefused() throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            #expect(chown(state.slotPath("k"), 4242, 4242) == 0)
            let error = refusal(state.slot(), Self.name)
            #expect(error?.isUnsafePermissions == true)
            #expect(error.map(SlotErrorText.describe)?.contains("4242") == true)
        }
    }

    // MARK: - Folders

    /// The folder a test opens to others: the state folder or its `slots` folder inside.
    enum OpenFolder: String, Sendable {
        case state, slots
    }

    /// Each folder with the modes that open it to others.
    static let openFolders: [(OpenFolder, mode_t)] = ([0o755, 0o750, 0o705, 0o701, 0o710, 0o777] as [mode_t]).map { (.state, $0) }
        + ([0o755, 0o701] as [mode_t]).map { (.slots, $0) }

    @Test(arguments: openFolders)
    func folderOpenToOthersIsRefused(_ folder: OpenFolder, _ mode: mode_t) throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            let before = try rawBytes(state.slotPath("k"))
            let path = folder == .state ? state.path : state.slotsFolder
            try setPermissions(path, mode)
            Self.expectEverythingRefused(state.slot(), path: path)
            #expect(try rawBytes(state.slotPath("k")) == before)
        }
    }

    @Test func symlinkedStateFolderIsRefused() throws {
        try withStateFolder { state throws in
            let real = "\(state.root)/real"
            try SealedFileSlot(folder: real, machine: hereMachine).write(Self.name, .test(secretMarker))
            #expect(symlink(real, state.path) == 0)
            Self.expectEverythingRefused(state.slot(), path: state.path)
        }
    }

    @Test func symlinkedSlotsFolderIsRefused() throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            let real = "\(state.root)/real-slots"
            Self.replaceWithSymlink(state.slotsFolder, movingItTo: real)
            Self.expectEverythingRefused(state.slot(), path: state.slotsFolder)
        }
    }

    @Test func stateFolderThatIsAFileIsRefused() throws {
        try withStateFolder { state throws in
            try makeFile(state.path, [1, 2, 3])
            let write = failure { try state.slot().write(Self.name, .test("x")) }
            #expect(write?.isUnsafePermissions == true)
            #expect(write?.path == state.path)
            #expect(refusal(state.slot(), Self.name)?.isUnsafePermissions == true)
        }
    }

    // MARK: - The device key

    @Test(arguments: [0o644, 0o640, 0o604] as [mode_t])
    func deviceKeyOpenToOthersIsRefused(_ mode: mode_t) throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            try setPermissions(state.deviceKeyPath, mode)
            let read = refusal(state.slot(), Self.name)
            #expect(read?.isUnsafePermissions == true)
            #expect(read?.path == state.deviceKeyPath)
            let write = failure { try state.slot().write(.test("new"), .test("x")) }
            #expect(write?.isUnsafePermissions == true)
            #expect(write?.path == state.deviceKeyPath)
            #expect(!exists(state.slotPath("new")))
            // The look before a prompt reads only the key's header, through the same checks.
            guard case .unknown(let holding) = state.slot().holding(Self.name) else {
                Issue.record("holding should be unknown")
                return
            }
            #expect(holding.isUnsafePermissions && holding.path == state.deviceKeyPath, "\(holding)")
        }
    }

    @Test func symlinkedDeviceKeyIsRefused() throws {
        try withStateFolder { state throws in
            try state.slot().write(Self.name, .test(secretMarker))
            let elsewhere = "\(state.root)/key-elsewhere"
            Self.replaceWithSymlink(state.deviceKeyPath, movingItTo: elsewhere)
            let read = refusal(state.slot(), Self.name)
            #expect(read?.isUnsafePermissions == true)
            #expect(read?.path == state.deviceKeyPath)
            guard case .unknown(let holding) = state.slot().holding(Self.name) else {
                Issue.record("holding should be unknown")
                return
            }
            #expect(holding.isUnsafePermissions && holding.path == state.deviceKeyPath, "\(holding)")
        }
    }
}
