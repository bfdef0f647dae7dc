#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Slots

/// Private files: atomic writes, exclusive creation, and refusals of anything loose.
@Suite("SecureFile")
struct SecureFileTests {
    // MARK: - write

    @Test func writeLeavesNoTemporaryFiles() throws {
        try withTemporaryFolder { root throws in
            let path = "\(root)/file"
            try SecureFile.write(path, Array("one".utf8))
            try SecureFile.write(path, Array("two".utf8))
            try SecureFile.write("\(root)/other", [0x00, 0xff])
            #expect(try allEntries(root) == ["file", "other"])
            #expect(try rawBytes(path) == Array("two".utf8))
        }
    }

    @Test func writeMakesA0600File() throws {
        try withTemporaryFolder { root throws in
            try SecureFile.write("\(root)/file", [1])
            #expect(try permissions("\(root)/file") == 0o600)
        }
    }

    @Test func writeReplacesTheFileByRenameNotInPlace() throws {
        try withTemporaryFolder { root throws in
            let path = "\(root)/file"
            try makeFile(path, Array("old".utf8), mode: 0o644)
            let oldInode = try inode(path)
            try SecureFile.write(path, Array("new".utf8))
            #expect(try inode(path) != oldInode)
            #expect(try permissions(path) == 0o600)
            #expect(try rawBytes(path) == Array("new".utf8))
        }
    }

    @Test func writeOfNothingMakesAnEmptyFile() throws {
        try withTemporaryFolder { root throws in
            try SecureFile.write("\(root)/file", [])
            #expect(try rawBytes("\(root)/file").isEmpty)
        }
    }

    @Test func exclusiveWriteKeepsTheExistingFileAndReturnsFalse() throws {
        try withTemporaryFolder { root throws in
            let path = "\(root)/file"
            try SecureFile.write(path, Array("first".utf8))
            let oldInode = try inode(path)
            let written = try Array("second".utf8).withUnsafeBytes { (raw) throws(SlotError) in
                try SecureFile.write(path, raw, exclusive: true)
            }
            #expect(!written)
            #expect(try rawBytes(path) == Array("first".utf8))
            #expect(try inode(path) == oldInode)
            #expect(try allEntries(root) == ["file"])
        }
    }

    @Test func exclusiveWriteCreatesAMissingFileAndReturnsTrue() throws {
        try withTemporaryFolder { root throws in
            let path = "\(root)/file"
            let written = try Array("first".utf8).withUnsafeBytes { (raw) throws(SlotError) in
                try SecureFile.write(path, raw, exclusive: true)
            }
            #expect(written)
            #expect(try rawBytes(path) == Array("first".utf8))
            #expect(try permissions(path) == 0o600)
            #expect(try allEntries(root) == ["file"])
        }
    }

    @Test func writeIntoAMissingFolderFailsAndLeavesNothing() throws {
        try withTemporaryFolder { root throws in
            let error = failure { try SecureFile.write("\(root)/missing/file", [1]) }
            guard case .io(_, let e, _) = error else {
                Issue.record("expected .io, got \(String(describing: error))")
                return
            }
            #expect(e == ENOENT)
            #expect(try allEntries(root).isEmpty)
        }
    }

    // MARK: - read

    @Test func readGivesBackTheBytes() throws {
        try withTemporaryFolder { root throws in
            let bytes: [UInt8] = [0x00, 0x0a, 0xff]
            try SecureFile.write("\(root)/file", bytes)
            let read = try #require(try SecureFile.read("\(root)/file", maximumCount: 3))
            #expect(read.testBytes == bytes)
        }
    }

    @Test func readOfAMissingFileIsNil() throws {
        try withTemporaryFolder { root throws in
            #expect(try SecureFile.read("\(root)/missing", maximumCount: 10) == nil)
        }
    }

    @Test func readRefusesAFileLargerThanTheMaximum() throws {
        try withTemporaryFolder { root throws in
            try SecureFile.write("\(root)/file", [1, 2, 3, 4])
            let error = failure { try SecureFile.read("\(root)/file", maximumCount: 3) }
            #expect(error?.isTampered == true)
        }
    }

    @Test func readRefusesAFileOpenToOthers() throws {
        try withTemporaryFolder { root throws in
            try makeFile("\(root)/file", [1], mode: 0o640)
            let error = failure { try SecureFile.read("\(root)/file", maximumCount: 3) }
            #expect(error?.isUnsafePermissions == true)
        }
    }

    @Test func readRefusesASymlink() throws {
        try withTemporaryFolder { root throws in
            try makeFile("\(root)/real", [1])
            #expect(symlink("\(root)/real", "\(root)/link") == 0)
            let error = failure { try SecureFile.read("\(root)/link", maximumCount: 3) }
            #expect(error == .unsafePermissions(path: "\(root)/link", detail: "it is a symbolic link"))
        }
    }

    // MARK: - Folders

    @Test func ensurePrivateFolderMakesMissingParentsPrivate() throws {
        try withTemporaryFolder { root throws in
            try SecureFile.ensurePrivateFolder("\(root)/a/b/c")
            for path in ["\(root)/a", "\(root)/a/b", "\(root)/a/b/c"] {
                #expect(try permissions(path) == 0o700, "\(path)")
            }
            try SecureFile.ensurePrivateFolder("\(root)/a/b/c")  // a second time is fine
        }
    }

    @Test func ensurePrivateFolderRefusesALooseFolder() throws {
        try withTemporaryFolder { root throws in
            #expect(mkdir("\(root)/loose", 0o700) == 0)
            try setPermissions("\(root)/loose", 0o755)
            let error = failure { try SecureFile.ensurePrivateFolder("\(root)/loose") }
            #expect(error?.isUnsafePermissions == true)
            #expect(error.map(SlotErrorText.describe)?.contains("chmod 700") == true)
        }
    }

    @Test func privateFolderExistsIsFalseForMissingPaths() throws {
        try withTemporaryFolder { root throws in
            #expect(try !SecureFile.privateFolderExists("\(root)/missing"))
            #expect(try SecureFile.privateFolderExists(root))
        }
    }

    /// A file where a folder of the path should be is not "missing": it is refused, naming that file.
    @Test func aFileInPlaceOfAFolderIsRefusedNamingIt() throws {
        try withTemporaryFolder { root throws in
            try makeFile("\(root)/file")
            let want = SlotError.unsafePermissions(path: "\(root)/file", detail: "it is not a folder")
            let exists = #expect(throws: SlotError.self) { _ = try SecureFile.privateFolderExists("\(root)/file/below") }
            #expect(exists == want)
            let ensure = #expect(throws: SlotError.self) { try SecureFile.ensurePrivateFolder("\(root)/file/below") }
            #expect(ensure == want)
        }
    }

    // MARK: - remove and entries

    @Test func removeReturnsTrueThenFalse() throws {
        try withTemporaryFolder { root throws in
            try SecureFile.write("\(root)/file", [1])
            #expect(try SecureFile.remove("\(root)/file"))
            #expect(try !SecureFile.remove("\(root)/file"))
        }
    }

    @Test func entriesSkipHiddenFiles() throws {
        try withTemporaryFolder { root throws in
            try makeFile("\(root)/b")
            try makeFile("\(root)/a")
            try makeFile("\(root)/.tmp-1-2")
            try makeFile("\(root)/.x")
            #expect(try SecureFile.entries(of: root).sorted() == ["a", "b"])
            #expect(try SecureFile.entries(of: "\(root)/missing").isEmpty)
        }
    }

    @Test(arguments: [("a", "."), ("/a", "/"), ("/a/b", "/a"), ("/a/b/c", "/a/b"), ("a/b", "a")])
    func parentOfAPath(_ path: String, _ parent: String) {
        #expect(SecureFile.parent(of: path) == parent)
    }
}
