#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// A lock file, the state folder or the vault's `locked` marker that is not what vaultctl made (a symlink, a
/// dangling symlink, a folder, loose permissions, another owner; a file where the folder should be) is
/// refused with 78 like any unsafe file, in one line naming it, never exit 1 and never silently accepted.
@Suite("locks: unsafe lock files are 78", .tags(.needsRoot, .needsServices))
struct UnsafeLockFileTests {
    enum Plant: String, CaseIterable, Sendable {
        case symlink, danglingSymlink, folder, looseMode, otherOwner

        /// Puts this in place of `path` (which may exist).
        func apply(at path: String, in sb: Sandbox) throws {
            unlink(path)
            switch self {
            case .symlink:
                let target = "\(sb.root)/elsewhere"
                close(open(target, O_WRONLY | O_CREAT, 0o600))
                try #require(Glibc.symlink(target, path) == 0)
            case .danglingSymlink: try #require(Glibc.symlink("\(sb.root)/nowhere", path) == 0)
            case .folder: try #require(mkdir(path, 0o700) == 0)
            case .looseMode:
                close(open(path, O_WRONLY | O_CREAT, 0o600))
                try #require(chmod(path, 0o644) == 0)
            case .otherOwner:
                close(open(path, O_WRONLY | O_CREAT, 0o600))
                try #require(chown(path, 65534, 65534) == 0)
            }
        }
    }

    /// Each lock file, with a command that takes it.
    static func locks(_ sb: Sandbox, _ name: String) -> [(String, [String])] {
        [("\(sb.stateFolder)/.changes.lock", ["store", name]),
         ("\(sb.stateFolder)/.changes.lock", ["status", name]),
         ("\(sb.configFolder)/.modes.lock", ["store", name]),
         ("\(sb.stateFolder)/.ratelimit.json.lock", ["read", name]),
         ("\(sb.stateFolder)/.supply.json.lock", ["allow-supply", name, "off"]),
         ("\(sb.stateFolder)/.audit.lock", ["read", name])]
    }

    @Test(arguments: Plant.allCases)
    func aLockFileThatIsNotAPrivateFileIsRefused(_ plant: Plant) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("unsafe-lock")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        #expect(try sb.read(name).status == 0)
        for (lock, args) in Self.locks(sb, name) {
            try plant.apply(at: lock, in: sb)
            let r = try sb.vaultctl(args, stdin: .text("other-value"))
            #expect(r.status == 78, "\(plant) at \(lock), \(args): \(r)")
            #expect(r.stderr.contains(lock) && r.stderr.filter { $0 == "\n" }.count == 1, "names it, in one line: \(r.stderr)")
            #expect(!r.stdoutText.contains("-value"), "\(args): nothing disclosed")
            unlink(lock)
            rmdir(lock)
        }
        // Unchanged, and fine again once the lock files are gone.
        let r = try sb.read(name)
        #expect(r.status == 0 && r.stdoutText == "the-value", "\(r)")
    }

    /// A file where the state folder should be: every command that looks there says so with 78.
    @Test func aFileInPlaceOfTheStateFolderIsRefused() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("state-file")
        close(open(sb.stateFolder, O_WRONLY | O_CREAT, 0o600))
        for args in [["store", name], ["read", name], ["status", name], ["delete", name], ["list"], ["lock"]] {
            let r = try sb.vaultctl(args, stdin: .text("a-value"), overriding: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
            #expect(r.status == 78, "\(args): \(r)")
            #expect(r.stderr.contains(sb.stateFolder) && r.stderr.filter { $0 == "\n" }.count == 1, "\(args): \(r.stderr)")
        }
    }

    /// A folder named `locked` (not a marker vaultctl made): 78 naming it, before any prompt, and the vault
    /// can be unlocked once it is gone.
    @Test func aFolderInPlaceOfTheLockMarkerIsRefused() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("locked-folder")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        try #require(mkdir("\(sb.stateFolder)/locked", 0o700) == 0)
        for args in [["unlock"], ["read", name]] {
            let r = try sb.vaultctlCounted(args)
            #expect(r.status == 78, "\(args): \(r)")
            #expect(r.stderr.contains("\(sb.stateFolder)/locked"), "\(r.stderr)")
        }
        #expect(sb.askpassCalls == 0, "refused before any prompt")
        rmdir("\(sb.stateFolder)/locked")
        #expect(try sb.read(name).stdoutText == "the-value")
    }
}
