#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
import TestSupport

/// A software TPM 2.0 (swtpm) started by `scripts/swtpm.sh` on private Unix sockets, with its own state
/// folder: one instance is one machine's TPM, a second one (another state, other seeds) is "another machine".
///
/// Stop it with `stop()` (tests use `defer`; it can be started again on the same state with `restart()`);
/// `deinit` stops it too, and the suite's guard process stops any still running when the test process dies.
final class SoftwareTPM: Sendable {
    /// The folder given to the script (`state/`, `sock`, `env`, `pids`).
    let folder: String
    /// `VAULTCTL_TPM2_TCTI` for this TPM (`swtpm:path=…`).
    let tcti: String
    private let running = Mutex(true)

    private init(folder: String, tcti: String) {
        self.folder = folder
        self.tcti = tcti
    }

    /// Starts a TPM with fresh state in a new folder under the suite's root.
    static func start() throws -> SoftwareTPM {
        let folder = try Fixtures.makeFolder("tpm")
        let tcti = try launch(folder)
        return SoftwareTPM(folder: folder, tcti: tcti)
    }

    private static func launch(_ folder: String) throws -> String {
        let result = ProcessRunner.run(Paths.swtpmScript, ["start", folder], environment: Fixtures.baseEnvironment)
        guard result.status == 0 else {
            _ = ProcessRunner.run(Paths.swtpmScript, ["stop", folder], environment: Fixtures.baseEnvironment)
            throw SetupError(description: "scripts/swtpm.sh start failed: \(result)")
        }
        guard let tcti = try EnvFile.load("\(folder)/env")["VAULTCTL_TPM2_TCTI"] else {
            throw SetupError(description: "\(folder)/env has no VAULTCTL_TPM2_TCTI")
        }
        return tcti
    }

    /// Stops the TPM by its PID (later calls do nothing until `restart`).
    func stop() {
        let was = running.withLock { value -> Bool in
            defer { value = false }
            return value
        }
        if was { _ = ProcessRunner.run(Paths.swtpmScript, ["stop", folder], environment: Fixtures.baseEnvironment) }
    }

    /// Starts the same TPM (same state folder, same seeds) again after `stop`.
    func restart() throws {
        _ = try Self.launch(folder)
        running.withLock { $0 = true }
    }

    /// Kills swtpm with SIGKILL (no TPM2_Shutdown: an unclean shutdown, as a crash or a power cut is),
    /// then starts the same TPM again.
    func crash() throws {
        if let pid {
            kill(pid, SIGKILL)
            for _ in 0..<200 where kill(pid, 0) == 0 { usleep(10_000) }
        }
        stop()
        try restart()
    }

    /// The swtpm process id, while it runs.
    var pid: pid_t? {
        guard let text = FileText.read("\(folder)/pids"), let n = Int32(text.filter(\.isNumber)) else { return nil }
        return n
    }

    deinit { stop() }

    /// Runs a tpm2-tools program against this TPM (`TPM2TOOLS_TCTI`).
    func tool(_ name: String, _ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        let env = Fixtures.baseEnvironment.merging(["TPM2TOOLS_TCTI": tcti]) { $1 }
        return ProcessRunner.run(Paths.tool(name), args, environment: env, timeout: .seconds(20), sourceLocation: sourceLocation)
    }
}
