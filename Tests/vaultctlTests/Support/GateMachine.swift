#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A machine with `vaultctl-gate` installed as `make install` puts it (`scripts/gate-namespace.sh`): a mount
/// namespace of its own, with the users alice and bob (passwords `alice-pw`, `bob-pw`), the group `vaultctl`,
/// `/var/lib/vaultctl` root:vaultctl 0770, and a real PAM stack (pam_unix through the set-group-ID
/// `unix_chkpwd`). pam_wrapper cannot reach into a set-group-ID program, so nothing here is a fake.
///
/// Needs root (the test suite runs as root in CI); `start()` throws otherwise, and the suites skip.
final class GateMachine: @unchecked Sendable {
    let folder: String
    let holder: String

    static var canRun: Bool { getuid() == 0 && access("/usr/bin/nsenter", X_OK) == 0 && access("/usr/bin/setpriv", X_OK) == 0 }

    private init(folder: String, holder: String) {
        self.folder = folder
        self.holder = holder
    }

    static func start() throws -> GateMachine {
        // Under the suite's root, which goes at exit: alice and bob may pass through it (not list it) to
        // their machine's folder and the scripts the tests write there.
        chmod(Fixtures.root, 0o711)
        let folder = try Fixtures.makeFolder("gate")
        let gate = "\(Paths.folder(of: Paths.vaultctl))/vaultctl-gate"
        let r = ProcessRunner.run("\(Paths.repositoryRoot)/scripts/gate-namespace.sh", ["start", folder, Paths.vaultctl, gate],
                                  environment: Fixtures.baseEnvironment)
        guard r.status == 0, let pid = try? String(contentsOfFile: "\(folder)/pid"), !pid.isEmpty else {
            throw SetupError(description: "scripts/gate-namespace.sh start failed: \(r)")
        }
        return GateMachine(folder: folder, holder: pid.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    deinit {
        _ = ProcessRunner.run("\(Paths.repositoryRoot)/scripts/gate-namespace.sh", ["stop", folder], environment: Fixtures.baseEnvironment)
        _ = ProcessRunner.run("/bin/rm", ["-rf", folder], environment: Fixtures.baseEnvironment)
    }

    var vaultctl: String { "\(folder)/m/prefix/bin/vaultctl" }
    /// The same binary with no gate beside it: the unprotected mode.
    var plainVaultctl: String { "\(folder)/m/plain/bin/vaultctl" }
    var gate: String { "\(folder)/m/prefix/libexec/vaultctl/vaultctl-gate" }
    func home(_ user: String) -> String { "\(folder)/m/home/\(user)" }

    /// The uid the namespace gave `user`.
    func uid(_ user: String) -> String {
        asRoot("id -u \(user)").stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The user's environment: a home, system PATH, no session bus (the sync slot is not what these test).
    func environment(_ user: String, _ extra: [String: String]) -> [String: String] {
        var env = ["HOME": home(user), "PATH": Paths.systemPATH, "LANG": "C.UTF-8",
                   "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs `program` (default: the installed vaultctl) with `arguments` as `user`, inside the machine,
    /// `wrap` first (`setpriv --no-new-privs`, `strace -f`, `prlimit`…).
    func run(_ user: String, _ arguments: [String], program: String? = nil, stdin: Stdin = .null,
             environment extra: [String: String] = [:], wrap: [String] = [], timeout: Duration = .seconds(30),
             sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        let setpriv = ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--"]
        return ProcessRunner.run("/usr/bin/nsenter", ["--mount=/proc/\(holder)/ns/mnt", "--"] + setpriv + wrap + [program ?? vaultctl] + arguments,
                                 environment: environment(user, extra), stdin: stdin, timeout: timeout,
                                 sourceLocation: sourceLocation)
    }

    /// A shell command as root inside the machine.
    @discardableResult
    func asRoot(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        ProcessRunner.run("/usr/bin/nsenter", ["--mount=/proc/\(holder)/ns/mnt", "--", "/bin/bash", "-c", command],
                          environment: Fixtures.baseEnvironment, sourceLocation: sourceLocation)
    }

    /// Every user's vault gone, on both sides: each test starts from a fresh machine.
    func reset() {
        asRoot("rm -rf /var/lib/vaultctl/* \(home("alice"))/.[!.]* \(home("bob"))/.[!.]* \(home("alice"))/* \(home("bob"))/*")
    }

    /// Writes an executable script (0755, readable by the users) into the machine's folder.
    func script(_ name: String, _ body: String) throws -> String {
        let path = "\(folder)/\(name)"
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// A new path in the machine's folder for `heldUntil` and `release`, unique to one test.
    func signal(_ name: String) -> String { "\(folder)/\(name)-\(UInt32.random(in: 0...UInt32.max))" }

    /// A shell line for a script the tests write: it waits (at most 20 s) until the test calls `release(path)`.
    /// It stands where a person or a program takes its time (an askpass, the input of a gate started by
    /// hand), so that what waits behind it is looked at while it waits, for as long as the test needs, and
    /// not for a fixed time.
    static func heldUntil(_ path: String) -> String {
        "i=0; while [ ! -e '\(path)' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
    }

    /// Lets the scripts waiting in `heldUntil(path)` go on.
    func release(_ path: String) {
        #expect(FileText.write(path, "", mode: 0o644), "could not write \(path)")
    }

    /// Whether a process runs (in the machine or not) with `word` among its command line's words: a script
    /// the tests wrote, run by `sh`.
    static func runs(withWord word: String) -> Bool {
        guard let dir = opendir("/proc") else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = PamWrapperDirs.direntName(entry)
            guard Int32(name) != nil, let raw = FileBytes.read("/proc/\(name)/cmdline") else { continue }
            if raw.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == word }) { return true }
        }
        return false
    }

    /// The fingerprint reader's folder (`scripts/fprintd-virtual.sh`), once `startFingerprintReader` ran.
    var reader: String { "\(folder)/fp" }

    static var canRunFingerprintReader: Bool {
        canRun && access("/usr/libexec/fprintd", X_OK) == 0 && access("/usr/bin/fprintd-enroll", X_OK) == 0
            && ["x86_64", "aarch64"].contains { access("/usr/lib/\($0)-linux-gnu/security/pam_fprintd.so", F_OK) == 0 }
    }

    /// Starts the real fprintd with libfprint's virtual reader in the machine, on a system bus of its own.
    func startFingerprintReader() throws {
        let r = asRoot("\(Paths.repositoryRoot)/scripts/fprintd-virtual.sh start \(reader)")
        guard r.status == 0 else { throw SetupError(description: "scripts/fprintd-virtual.sh start failed: \(r)") }
    }

    /// Enrols `finger` (five scans) as `user`'s right index finger.
    func enrol(_ user: String, finger: String) throws {
        let scans = (0..<5).map { _ in "sleep 0.4; \(Paths.repositoryRoot)/scripts/fprintd-virtual.sh scan \(reader) \(finger)" }.joined(separator: "; ")
        let r = asRoot("(\(scans)) >/dev/null 2>&1 & timeout 30 fprintd-enroll -f right-index-finger \(user); wait")
        guard r.status == 0, r.stdoutText.contains("enroll-completed") else { throw SetupError(description: "fprintd-enroll failed: \(r)") }
    }

    /// Puts `finger` on the reader once it is listening (when a command asks for a finger), from a process of
    /// its own: returns at once.
    func scanSoon(_ finger: String) {
        // In a process group of its own, noted, so that `stopScans` ends it and nothing else.
        asRoot("setsid sh -c 'sleep 0.3; \(Paths.repositoryRoot)/scripts/fprintd-virtual.sh scan \(reader) \(finger)' >/dev/null 2>&1 & echo $! >> \(reader)/scans")
    }

    /// Takes back every finger still waiting to be put on the reader (one no command asked for).
    func stopScans() {
        asRoot("[ -f \(reader)/scans ] && while read -r p; do kill -- -$p 2>/dev/null; done < \(reader)/scans; rm -f \(reader)/scans; true")
    }

    /// The gate's audit log of `user`, read as root.
    func gateLog(_ user: String) -> String {
        asRoot("cat /var/lib/vaultctl/\(uid(user))/audit.log 2>/dev/null").stdoutText
    }
}
