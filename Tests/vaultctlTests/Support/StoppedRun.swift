#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// A `vaultctl` run stopped at a chosen system call, so a test can change the vault between two of its steps
/// and then let it go on: a race made deterministic instead of hoped for.
///
/// It runs under strace, whose fault injection sends the process SIGSTOP on entry to the `occurrence`-th
/// `syscall` that names `path` (`-P`); the test waits until strace reports the stop, does what the other
/// party would do, and `resume()` sends SIGCONT and waits for the result.
final class StoppedRun: @unchecked Sendable {  // the result is handed over under `Outcome`'s lock
    /// The run's result, set once by its thread. `Sendable` through its lock.
    private final class Outcome: Sendable {
        let value = Mutex<ProcessResult?>(nil)
        let finished = DispatchSemaphore(value: 0)
    }
    private let outcome = Outcome()
    /// The word that tells this run's process apart in `/proc/*/cmdline` (a unique slot name).
    private let marker: String
    /// strace's account of the run: the group stop shows there as `PID --- stopped by SIGSTOP ---` (a
    /// process merely in one of strace's own syscall stops is in state `t` too, so the state alone does
    /// not tell).
    private let traceFile: String
    private(set) var pid: pid_t?

    /// Starts `vaultctl ARGS` in `sb` under strace. `marker` must be one of `args` and unique to this run.
    init(_ sb: Sandbox, _ args: [String], marker: String, askpass: AskpassMode = .correct, stdin: Stdin = .null,
         overriding: [String: String] = [:], stoppingAt syscall: String = "openat", of path: String,
         occurrence: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        self.marker = marker
        traceFile = "\(sb.root)/stopped-run.\(UInt32.random(in: 0...UInt32.max)).trace"
        let prefix = [Paths.tool("strace"), "-f", "-qq", "-o", traceFile, "-P", path, "-e", "trace=\(syscall)",
                      "-e", "inject=\(syscall):signal=STOP:when=\(occurrence)"]
        let env = try sb.environment(askpass: askpass).merging(overriding) { $1 }
        let outcome = self.outcome
        let thread = Thread {
            let r = ProcessRunner.run(prefix[0], Array(prefix.dropFirst()) + [Paths.vaultctl] + args, environment: env,
                                      stdin: stdin, timeout: .seconds(60), sourceLocation: sourceLocation)
                .droppingPAMWrapperNoise()
            outcome.value.withLock { $0 = r }
            outcome.finished.signal()
        }
        thread.start()
    }

    /// Waits (at most `atMost`) until the run is stopped at its system call; false when it ended or never
    /// got there.
    func waitUntilStopped(atMost: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now + atMost
        while ContinuousClock.now < deadline {
            if outcome.value.withLock({ $0 != nil }) { return false }
            if let trace = FileText.read(traceFile), let line = trace.split(separator: "\n").first(where: { $0.contains("--- stopped by SIGSTOP ---") }),
               let pid = Int32(line.prefix { $0.isNumber }), Self.process(withArgument: marker) == pid {
                self.pid = pid
                return true
            }
            usleep(10_000)
        }
        return false
    }

    /// Lets the stopped process go on and waits for it to end.
    func resume() -> ProcessResult {
        if let pid { kill(pid, SIGCONT) }
        outcome.finished.wait()
        return outcome.value.withLock { $0! }
    }

    /// How the run ended, when it did without being resumed.
    var result: ProcessResult? { outcome.value.withLock { $0 } }

    /// A running vaultctl (its first word is the tested binary) with `argument` among its words.
    private static func process(withArgument argument: String) -> pid_t? {
        guard let dir = opendir("/proc") else { return nil }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = PamWrapperDirs.direntName(entry)
            guard let pid = Int32(name), let raw = FileBytes.read("/proc/\(name)/cmdline") else { continue }
            let words = raw.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            if words.first == Paths.vaultctl && words.contains(argument) { return pid }
        }
        return nil
    }
}
