import Foundation
import Testing
import TestSupport

/// libsystemd (sd-bus) and libgcrypt are loaded when a command first reaches the session bus, and libpam when
/// it first authenticates, not when vaultctl starts: a device slot's read and status, and `help`, never load them (that is most of a short command's
/// start-up cost after Swift's own), and a machine where they cannot be loaded still has its device slots,
/// with a sync slot that says plainly what is missing (69). The dynamic loader itself is the witness:
/// `LD_DEBUG=libs` makes it print every library it maps, to the process's standard error. (`status` of a
/// device slot does reach the bus: it says "on-this-device" only after asking the Secret Service
/// for a copy.)
@Suite("loading sd-bus, libgcrypt and libpam at first use", .tags(.needsRoot, .needsServices))
struct LibraryLoadingTests {
    static let libsystemd = "libsystemd.so.0"
    static let libgcrypt = "libgcrypt.so.20"
    static let libpam = "libpam.so.0"

    /// The libraries the loader mapped while `vaultctl ARGS` ran (its `LD_DEBUG=libs` lines), by soname.
    static func loaded(_ r: ProcessResult) -> Set<String> {
        var out: Set<String> = []
        for line in r.stderr.split(separator: "\n") where line.contains("calling init:") {
            if let name = line.split(separator: "/").last { out.insert(String(name).trimmingCharacters(in: .whitespaces)) }
        }
        return out
    }

    @Test func commandsThatNeverReachTheBusLoadNeither() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("dl-device")
        try sb.store(name, TestData.binarySecret(name), mode: "device")
        let debug = ["LD_DEBUG": "libs"]

        let help = try sb.vaultctl(["help"], overriding: debug)
        #expect(help.status == 0, "\(help)")
        let helpLoaded = Self.loaded(help)
        try #require(helpLoaded.contains { $0.hasPrefix("libsodium") }, "LD_DEBUG=libs shows what was loaded: \(help.stderr.prefix(400))")

        let read = try sb.vaultctl(["read", name], overriding: debug)
        #expect(read.status == 0, "\(read)")
        #expect(read.stdout == TestData.binarySecret(name))
        let status = sb.vaultctlWithoutPAM(["status", name], overriding: debug)
        #expect(status.status == 0, "\(status)")
        #expect(!Self.loaded(help).contains(Self.libpam), "help loaded libpam: \(Self.loaded(help).sorted())")
        #expect(!Self.loaded(status).contains(Self.libpam), "status loaded libpam: \(Self.loaded(status).sorted())")
        #expect(Self.loaded(read).contains(Self.libpam), "a gated read authenticates: \(Self.loaded(read).sorted())")
        for (what, r) in [("help", help), ("a gated device read", read)] {
            let libs = Self.loaded(r)
            #expect(!libs.contains(Self.libsystemd), "\(what) loaded libsystemd: \(libs.sorted())")
            #expect(!libs.contains(Self.libgcrypt), "\(what) loaded libgcrypt: \(libs.sorted())")
        }
    }

    @Test func syncCommandsLoadThemWhenTheyReachTheBus() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("dl-sync")
        try sb.store(name, TestData.textSecret(name), mode: "sync")
        let debug = ["LD_DEBUG": "libs"]

        let status = sb.vaultctlWithoutPAM(["status", name], overriding: debug)
        #expect(status.status == 0, "\(status)")
        #expect(Self.loaded(status).contains(Self.libsystemd), "\(Self.loaded(status).sorted())")

        let read = try sb.vaultctl(["read", name], overriding: debug)
        #expect(read.status == 0, "\(read)")
        #expect(read.stdout == TestData.textSecret(name))
        #expect(Self.loaded(read).isSuperset(of: [Self.libsystemd, Self.libgcrypt]), "\(Self.loaded(read).sorted())")
    }

    /// Where the dynamic loader finds `soname` on this machine (`ldconfig -p`), symlinks resolved.
    static func libraryPath(_ soname: String) throws -> String {
        let r = ProcessRunner.run(Paths.tool("ldconfig"), ["-p"], environment: Fixtures.baseEnvironment)
        let line = try #require(r.stdoutText.split(separator: "\n").first { $0.contains(soname) },
                                "ldconfig -p lists \(soname)")
        let path = try #require(line.components(separatedBy: "=> ").last)
        return URL(fileURLWithPath: path.trimmingCharacters(in: .whitespaces)).resolvingSymlinksInPath().path
    }

    /// A mount namespace of the command's own in which `soname` cannot be loaded: an empty file is
    /// bind-mounted over it.
    static func without(_ soname: String, in sb: Sandbox) throws -> [String] {
        let library = try libraryPath(soname)
        let empty = "\(sb.root)/empty-library"
        if !FileManager.default.fileExists(atPath: empty) {
            try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        }
        return [Paths.tool("unshare"), "-m", Paths.tool("sh"), "-c",
                "mount --bind '\(empty)' '\(library)' && exec \"$0\" \"$@\""]
    }

    /// A library the sync slot needs that cannot be loaded: the sync slot is unavailable, in words that name
    /// what is missing; device slots work. (On Debian 12 libsystemd itself links libgcrypt, so without
    /// libgcrypt it is libsystemd that cannot be loaded, and the words name libgcrypt as its reason; a
    /// libsystemd that loads libgcrypt only when it needs it leaves vaultctl's own key exchange to say so.)
    @Test(arguments: [libsystemd, libgcrypt])
    func aLibraryThatCannotBeLoadedLeavesTheDeviceSlotsWorking(_ soname: String) throws {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("dl-missing-device")
        let sync = sb.uniqueSlot("dl-missing-sync")
        try sb.store(device, TestData.binarySecret(device), mode: "device")
        try sb.store(sync, TestData.textSecret(sync), mode: "sync")
        let without = try Self.without(soname, in: sb)

        let read = try sb.vaultctl(["read", device], prefix: without)
        #expect(read.status == 0, "a device read without \(soname): \(read)")
        #expect(read.stdout == TestData.binarySecret(device))

        let status = try sb.vaultctl(["status", sync], prefix: without)
        #expect(status.status == 0, "status says what it could not look at: \(status)")
        if status.stdoutText.hasPrefix("unknown: ") {
            #expect(status.stdoutText.contains("could not load libsystemd"), "\(status.stdoutText)")
            #expect(status.stdoutText.contains(soname), "names the library that is missing: \(status.stdoutText)")
        } else {
            // Only libgcrypt is missing and libsystemd does not need it: status moves no value.
            #expect(soname == Self.libgcrypt && status.stdoutText.hasPrefix("in-slot: "), "\(status.stdoutText)")
        }

        let syncRead = try sb.vaultctl(["read", sync], prefix: without)
        syncRead.expectFailure(69, saying: "could not load")
        #expect(syncRead.stderr.contains(soname), "names the library that is missing: \(syncRead.stderr)")
        #expect(syncRead.stderr.split(separator: "\n").count == 1, "one line: \(syncRead.stderr)")

        // Nothing was lost: with the library back, the value reads as it was stored.
        let back = try sb.read(sync)
        #expect(back.status == 0 && back.stdout == TestData.textSecret(sync), "\(back)")
    }

    /// Without libpam nothing gated opens (78, one line, nothing on stdout), and what needs no PAM works.
    @Test func withoutLibpamNothingGatedOpens() throws {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("dl-nopam")
        try sb.store(device, TestData.binarySecret(device), mode: "device")
        let without = try Self.without(Self.libpam, in: sb)

        let read = try sb.vaultctl(["read", device], prefix: without)
        read.expectFailure(78, saying: "could not load libpam")
        #expect(read.stderr.split(separator: "\n").count == 1, "one line: \(read.stderr)")

        let status = try sb.vaultctl(["status", device], prefix: without)
        #expect(status.status == 0 && status.stdoutText.hasPrefix("on-this-device: "), "\(status)")
        #expect(try sb.read(device).stdout == TestData.binarySecret(device), "the value is as it was")
    }
}
