import Foundation
import Testing
import TestSupport
@testable import Vault

/// vaultctl believes a hello only from a process the kernel started set-group-ID from the gate's file
/// (`GateIdentity`): a gate that runs with the user's own group (no_new_privs, a nosuid mount, a tracer) is
/// dumpable, and another program of the user's could take its pipes and ask for the password.
@Suite struct GateIdentityTests {
    /// A copy of `program` in a folder on the build's own file system (not /tmp, which may be nosuid),
    /// owned by `group` with `mode`.
    func copy(of program: String, group: gid_t, mode: mode_t) throws -> String {
        let folder = FileManager.default.currentDirectoryPath + "/.build/gate-identity-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/gate"
        try FileManager.default.copyItem(atPath: program, toPath: path)
        #expect(chown(path, 0, group) == 0 && chmod(path, mode) == 0)
        return path
    }

    @Test func theEffectiveGroupIsReadFromProc() {
        #expect(GateIdentity.effectiveGroup(of: getpid()) == getegid())
        #expect(GateIdentity.savedGroup(of: getpid()) == getegid())
        #expect(GateIdentity.effectiveGroup(of: 0) == nil)
    }

    @Test func aProcessWithTheUsersOwnGroupIsNotTheGate() throws {
        guard geteuid() == 0 else { return }  // chown to another group needs root (CI runs as root)
        let path = try copy(of: "/bin/sleep", group: 65534, mode: 0o2755)
        defer { try? FileManager.default.removeItem(atPath: SecureFileTestsPath.parent(path)) }
        // This very process stands for a gate the kernel did not raise: its group is the user's.
        let why = GateIdentity.notSetGroupID(pid: getpid(), path: path)
        #expect(why?.contains("your own group") == true, "\(why ?? "nil")")
        // A file without the set-group-ID bit is not the gate either.
        #expect(chmod(path, 0o755) == 0)
        #expect(GateIdentity.notSetGroupID(pid: getpid(), path: path)?.contains("not set-group-ID") == true)
    }

    @Test func aProcessTheKernelStartedSetGroupIDIsBelieved() throws {
        guard geteuid() == 0 else { return }
        let path = try copy(of: "/bin/sleep", group: 65534, mode: 0o2755)
        defer { try? FileManager.default.removeItem(atPath: SecureFileTestsPath.parent(path)) }
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("5"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&pid, path, nil, nil, argv, environ) == 0)
        defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0) }
        // Until the exec is done the child is a copy of this process: its name becomes the file's then.
        let execDone = Wait.until(seconds: 10) {
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "gate\n"
        }
        try #require(execDone, "the child did not exec \(path) within 10 s")
        #expect(GateIdentity.effectiveGroup(of: pid) == 65534)
        #expect(GateIdentity.savedGroup(of: pid) == 65534)
        #expect(GateIdentity.notSetGroupID(pid: pid, path: path) == nil)
    }
}

/// The folder of a path.
enum SecureFileTestsPath {
    static func parent(_ path: String) -> String { String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }
}
