#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Where a secret must never be: in any file of vaultctl's folders (raw bytes: device files are sealed), in
/// the audit log, on stderr, in the argv or environment of vaultctl or of any program it starts, and in a
/// core dump (there is none: core dumps are off and the process is not dumpable while it holds a secret).
@Suite("secret hygiene", .tags(.needsServices))
struct HygieneTests {
    /// The pieces of `secret` searched for: the whole, and three disjoint parts of 24 bytes (a leak of part
    /// of it counts too).
    static func needles(_ secret: String) -> [[UInt8]] {
        let bytes = Array(secret.utf8)
        return [bytes] + stride(from: 8, to: bytes.count - 24, by: 30).prefix(3).map { Array(bytes[$0..<($0 + 24)]) }
    }

    static func leaks(_ haystack: [UInt8], _ secret: String) -> Bool {
        needles(secret).contains { haystack.contains(bytes: $0) }
    }

    /// A program that records what it can see of itself and of its parent (vaultctl) into `folder`, then
    /// does `then` (print the password, or read its stdin).
    static func spyScript(folder: String, then: String) -> String {
        """
        #!/bin/sh
        n=$$
        cat /proc/self/cmdline > '\(folder)/'$n.self.cmdline
        cat /proc/self/environ > '\(folder)/'$n.self.environ
        cat /proc/$$/cmdline > '\(folder)/'$n.sh.cmdline
        cat /proc/$$/environ > '\(folder)/'$n.sh.environ
        printf '%s\\n' "$@" > '\(folder)/'$n.args
        cat /proc/$PPID/cmdline > '\(folder)/'$n.parent.cmdline 2> '\(folder)/'$n.parent.cmdline.err
        cat /proc/$PPID/environ > '\(folder)/'$n.parent.environ 2> '\(folder)/'$n.parent.environ.err
        cat /proc/$PPID/limits > '\(folder)/'$n.parent.limits 2> '\(folder)/'$n.parent.limits.err
        cat /proc/$PPID/status > '\(folder)/'$n.parent.status 2> '\(folder)/'$n.parent.status.err
        \(then)

        """
    }

    static func writeScript(_ path: String, _ text: String) throws {
        try #require(FileText.write(path, text, mode: 0o700) && chmod(path, 0o700) == 0, "could not write \(path)")
    }

    /// Everything a session of stores, reads, moves, supplies and failures leaves behind, searched for a
    /// distinctive secret.
    @Test func theSecretIsNowhereButWhereItWasHandedOver() throws {
        let sb = try Sandbox()
        let secret = ReliabilityData.hygieneMarker()
        let secretBytes = Array(secret.utf8)
        let device = sb.uniqueSlot("hyg-device")
        let sync = sb.uniqueSlot("hyg-sync")
        let spies = "\(sb.root)/spies"
        try #require(mkdir(spies, 0o700) == 0)
        let askpass = "\(sb.root)/spy-askpass"
        try Self.writeScript(askpass, Self.spyScript(folder: spies, then: "printf '%s\\n' '\(Fixtures.pamPassword)'"))
        let consumerOut = "\(sb.root)/consumer-stdin"
        let consumer = "\(sb.root)/spy-consumer"
        try Self.writeScript(consumer, Self.spyScript(folder: spies, then: "cat >> '\(consumerOut)'"))
        let spyEnv = ["VAULT_ASKPASS": askpass]
        // Failures below (a wrong password, a failing COMMAND) must not block the rest of the session.
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":100,"windowSeconds":300,"blockSeconds":300}}"#)

        var results: [(String, ProcessResult)] = []
        func run(_ args: [String], stdin: Stdin = .null, password: AskpassMode = .correct) throws -> ProcessResult {
            // The right password comes from the spying askpass program, a wrong one from the suite's own.
            let r = try Sandbox.repeatingPAMWrapperStartFailures {
                try sb.vaultctl(args, stdin: stdin, askpass: password, overriding: password == .correct ? spyEnv : [:])
            }
            results.append((args.joined(separator: " "), r))
            return r
        }

        #expect(try run(["store", device, "--allow-supply"], stdin: .text(secret)).status == 0)
        #expect(try run(["store", sync, "--mode", "sync", "--allow-supply"], stdin: .text(secret)).status == 0)
        for name in [device, sync] {
            let r = try run(["read", name])
            #expect(r.status == 0 && r.stdout == secretBytes, "read \(name): \(r)")
            let s = try run(["supply", name, "--", consumer, "--flag", "value"])
            #expect(s.status == 0, "supply \(name): \(s)")
            let a = try run(["askpass", name, "Passphrase: "])
            #expect(a.status == 0 && a.stdout == secretBytes, "askpass \(name): \(a)")
            #expect(try run(["read", name], password: .wrong).status == 77)
            #expect(try run(["status", name, "--json"]).status == 0)
        }
        #expect(try run(["move", device, "--to", "sync"]).status == 0)
        #expect(try run(["move", device, "--to", "device"]).status == 0)
        // A supply whose COMMAND fails, and one of a slot that may not be supplied.
        #expect(try run(["supply", device, "--", "/bin/false"]).status == 1)
        #expect(try run(["allow-supply", sync, "off"]).status == 0)
        #expect(try run(["supply", sync, "--", consumer]).status == 77)
        // Store a new value over the old one: the old is replaced, the new is the same secret in a new file.
        #expect(try run(["store", device], stdin: .text(secret)).status == 0)
        #expect(try run(["list", "--json"]).status == 0)
        #expect(try run(["log", "--json"]).status == 0)

        // Positive control: the secret did reach the places it was handed to, so the search can find it.
        let delivered = FileBytes.read(consumerOut) ?? []
        #expect(delivered == secretBytes + secretBytes, "two supplies delivered the exact bytes on stdin")

        // 1. Files under the state and config folders (and HOME), raw bytes; the audit log by name.
        let auditLog = "\(sb.stateFolder)/audit.log"
        try #require(Paths.exists(auditLog), "gated commands wrote an audit log")
        #expect(FileText.read(auditLog)?.contains("supply") == true)
        let files = Sandbox.filesUnder(sb.stateHome) + Sandbox.filesUnder(sb.configHome) + Sandbox.filesUnder(sb.home)
        #expect(files.contains(auditLog) && files.contains(sb.slotFile(device)))
        for file in files {
            #expect(!Self.leaks(FileBytes.read(file) ?? [], secret), "the secret is in \(file)")
        }
        // 2. stderr of every run, and stdout of every run that is not a read or askpass of it.
        for (what, r) in results {
            #expect(!Self.leaks(Array(r.stderr.utf8), secret), "the secret is on the stderr of '\(what)': \(r.stderr)")
            if !(what.hasPrefix("read") || what.hasPrefix("askpass")) {
                #expect(!Self.leaks(r.stdout, secret), "the secret is on the stdout of '\(what)'")
            }
        }
        // 3. What the askpass program and COMMAND saw of themselves and of vaultctl: argv, environment.
        let seen = (try FileManager.default.contentsOfDirectory(atPath: spies)).sorted()
        let parentViews = seen.filter { $0.hasSuffix(".parent.cmdline") }
        #expect(parentViews.count >= 8, "the spies ran as askpass and as COMMAND: \(seen)")
        for entry in seen {
            let bytes = FileBytes.read("\(spies)/\(entry)") ?? []
            #expect(!Self.leaks(bytes, secret), "the secret is in \(entry)")
        }
        // vaultctl's own argv as its children saw it: the command line given, nothing more.
        for entry in parentViews {
            let argv = (FileBytes.read("\(spies)/\(entry)") ?? []).split(separator: 0, omittingEmptySubsequences: false)
            #expect(argv.first.map { String(decoding: $0, as: UTF8.self) } == Paths.vaultctl, "\(entry)")
        }
        // 4. Core dumps were off in vaultctl while it asked for the password and while it handed the secret over.
        for entry in seen where entry.hasSuffix(".parent.limits") {
            let limits = FileText.read("\(spies)/\(entry)") ?? ""
            let line = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
            let fields = line.dropFirst("Max core file size".count).split(separator: " ")
            #expect(fields.count >= 2 && fields[0] == "0" && fields[1] == "0", "\(entry): \(line.debugDescription)")
        }
        // As root (CAP_SYS_PTRACE) /proc/PID/environ of a non-dumpable process is still readable; as any other
        // user it is not. Either way it held no secret (checked above); the unreadable case is its own test.
        let environErrors = seen.filter { $0.hasSuffix(".parent.environ.err") }
            .map { FileText.read("\(spies)/\($0)") ?? "" }.filter { !$0.isEmpty }
        if geteuid() != 0 {
            #expect(environErrors.count == parentViews.count, "vaultctl is not dumpable: its environ is closed to its own user")
        }
        print("HygieneTests: \(results.count) runs, \(files.count) files and \(seen.count) /proc views searched; vaultctl's environ read by its child as uid \(geteuid()): \(environErrors.isEmpty ? "readable" : "refused (\(environErrors.count))")")
    }

    /// Run as an ordinary user (as root: `nobody`, through `setpriv`), an askpass program looks at vaultctl
    /// while vaultctl waits for the password, holding no secret yet but about to: core dumps are off
    /// (`Max core file size 0 0`) and the process is not dumpable, so a process of the same user cannot read
    /// its environment and `/proc/PID/*` belongs to root.
    @Test(.enabled(if: geteuid() == 0, "needs root to run vaultctl as another user"))
    func vaultctlIsNotDumpableWhileItAsksForThePassword() throws {
        guard let pw = getpwnam("nobody") else { throw SetupError(description: "no user 'nobody'") }
        let uid = pw.pointee.pw_uid, gid = pw.pointee.pw_gid
        let folder = try OtherUserFolder()
        let root = folder.path
        // A PAM stack for `nobody` that `nobody` can read (the suite's own lives in a root-only folder).
        let pam = ProcessRunner.run(Paths.pamStackScript, ["\(root)/pam", "nobody", "nobody-password"],
                                    environment: Fixtures.baseEnvironment)
        try #require(pam.status == 0, "\(pam)")
        try #require(chown("\(root)/pam/passdb", uid, gid) == 0)
        for sub in ["pam", "pam/pam.d"] { chmod("\(root)/\(sub)", 0o755) }
        for file in ["pam/pam.d/vaultctl", "pam/pam.d/other"] { chmod("\(root)/\(file)", 0o644) }
        let pamEnv = try EnvFile.load("\(root)/pam/env")
        for sub in ["home", "state", "config", "spy"] {
            try #require(mkdir("\(root)/\(sub)", 0o700) == 0 && chown("\(root)/\(sub)", uid, gid) == 0)
        }
        let askpass = "\(root)/askpass"
        try #require(FileText.write(askpass, Self.spyScript(folder: "\(root)/spy", then: "printf '%s\\n' nobody-password"), mode: 0o755))
        chmod(askpass, 0o755)
        let secret = ReliabilityData.hygieneMarker()
        // A copy of the binary that `nobody` can reach: the build folder may sit in a folder only root can
        // enter (a clone in a `mktemp -d` folder is 0700).
        let binary = "\(root)/vaultctl"
        let copy = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, binary], environment: Fixtures.baseEnvironment)
        try #require(copy.status == 0 && chmod(binary, 0o755) == 0, "\(copy)")

        func asNobody(_ args: [String], stdin: Stdin = .null) -> ProcessResult {
            var words = ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", Paths.tool("env"),
                         "HOME=\(root)/home", "XDG_STATE_HOME=\(root)/state", "XDG_CONFIG_HOME=\(root)/config",
                         "VAULT_ASKPASS=\(askpass)", "DBUS_SESSION_BUS_ADDRESS=unix:path=\(root)/no-bus"]
            words += pamEnv.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ProcessRunner.run(Paths.tool("setpriv"), words + [binary] + args,
                                     environment: Fixtures.baseEnvironment, stdin: stdin).droppingPAMWrapperNoise()
        }
        let store = asNobody(["store", "s"], stdin: .text(secret))
        try #require(store.status == 0, "store as nobody: \(store)")
        let read = asNobody(["read", "s"])
        #expect(read.status == 0 && read.stdout == Array(secret.utf8), "read as nobody: \(read)")

        let spy = "\(root)/spy"
        let seen = try FileManager.default.contentsOfDirectory(atPath: spy)
        let prefix = try #require(seen.first { $0.hasSuffix(".parent.limits") }.map { String($0.dropLast(".parent.limits".count)) },
                                  "the askpass program ran: \(seen)")
        let limits = FileText.read("\(spy)/\(prefix).parent.limits") ?? ""
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(Array(core.split(separator: " ").dropFirst(4).prefix(2)) == ["0", "0"], "core dumps are off: \(core.debugDescription)")
        let environ = FileBytes.read("\(spy)/\(prefix).parent.environ") ?? []
        let environError = FileText.read("\(spy)/\(prefix).parent.environ.err") ?? ""
        #expect(environ.isEmpty && environError.contains("Permission denied"),
                "a non-dumpable process's environ is closed to its own user: \(environError.debugDescription), \(environ.count) bytes")
        // Its argv stays readable (that is not governed by dumpability) and holds no secret.
        let argv = FileBytes.read("\(spy)/\(prefix).parent.cmdline") ?? []
        #expect(argv.contains(bytes: Array("read".utf8)), "\(String(decoding: argv, as: UTF8.self))")
        for entry in seen {
            #expect(!Self.leaks(FileBytes.read("\(spy)/\(entry)") ?? [], secret), "\(entry)")
        }
        #expect(!Self.leaks(Array(read.stderr.utf8) + Array(store.stderr.utf8), secret))
    }
}

/// A folder another user can reach: `/tmp/vaultctl-e2e-user.XXXXXX` (0711, so only named paths inside are
/// reachable), removed on release. The suite's own root is 0700 and stays so.
final class OtherUserFolder {
    let path: String

    init() throws {
        var template = Array("/tmp/vaultctl-e2e-user.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SetupError(description: "mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
        chmod(path, 0o711)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
        PamWrapperDirs.sweepStale()
    }
}
