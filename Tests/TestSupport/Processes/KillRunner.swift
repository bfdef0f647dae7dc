// Duration and ContinuousClock are in the concurrency module, which the release build of this target
// (`make release`) lacks; only the tests run programs.
#if canImport(Testing)
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// How a run that `KillRunner` may have cut short ended.
public struct KilledRunResult: Sendable, CustomStringConvertible {
    /// Whether SIGKILL ended it (false: it exited on its own before the delay ran out).
    public let killed: Bool
    /// The exit status, or 128 + the signal number.
    public let status: Int32
    public let stdout: [UInt8]
    public let stderr: String

    public var description: String {
        killed ? "killed by SIGKILL" : "exited with status \(status), stderr: \(stderr.debugDescription)"
    }
}

/// Starts a program and sends SIGKILL to it (and its process group: its askpass child too) after a delay,
/// unless it has already exited. Like a power cut for that process: no handler, no cleanup.
///
/// The child has no controlling terminal, stdin is /dev/null, and stdout and stderr go to files
/// in `scratch` so nothing depends on pipes being drained. It starts as `ProcessRunner`'s children do
/// (the product's spawn: descriptors 3 and up closed, a process group of its own).
public enum KillRunner {
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                           killAfter delay: Duration, scratch: String,
                           sourceLocation: SourceLocation = #_sourceLocation) -> KilledRunResult {
        // A run that pam_wrapper (the test tool) could not start PAM for says nothing about the product.
        PamWrapperDirs.retryingStartFailures({
            runOnce(executable, arguments, environment: environment, killAfter: delay, scratch: scratch, sourceLocation: sourceLocation)
        }, ended: { $0.killed ? nil : ($0.status, $0.stderr) })
    }

    /// `run`, with `stdin` as the program's standard input: the bytes go to a file in `scratch`, and a shell
    /// `exec`s the program with that file as its input (so the pid that is killed is the program's own).
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8], environment: [String: String],
                           killAfter delay: Duration, scratch: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> KilledRunResult {
        let input = "\(scratch)/killed.stdin"
        try #require(FileBytes.write(input, stdin), "could not write \(input)", sourceLocation: sourceLocation)
        return run("/bin/sh", ["-c", "exec \"$0\" \"$@\" < '\(input)'", executable] + arguments,
                   environment: environment, killAfter: delay, scratch: scratch, sourceLocation: sourceLocation)
    }

    private static func runOnce(_ executable: String, _ arguments: [String], environment: [String: String],
                                killAfter delay: Duration, scratch: String,
                                sourceLocation: SourceLocation) -> KilledRunResult {
        runOnce(executable, arguments, environment: environment, scratch: scratch, sourceLocation: sourceLocation) { _ in
            let (seconds, attoseconds) = delay.components
            var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var rest = timespec()
            while nanosleep(&pause, &rest) != 0 && errno == EINTR { pause = rest }
        }
    }

    /// Starts the program, calls `waitBeforeKill` with its pid, then kills it unless it has exited.
    private static func runOnce(_ executable: String, _ arguments: [String], environment: [String: String],
                                scratch: String, sourceLocation: SourceLocation,
                                waitBeforeKill: (pid_t) -> Void) -> KilledRunResult {
        if environment["LD_PRELOAD"] != nil { PamWrapperDirs.sweepStale() }
        let outPath = "\(scratch)/killed.stdout"
        let errPath = "\(scratch)/killed.stderr"
        let started = ProcessRunner.start(executable, arguments, environment: environment) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        guard case .success(let pid) = started else {
            if case .failure(let failure) = started {
                Issue.record("Could not start \(executable): \(String(cString: strerror(failure.errno)))", sourceLocation: sourceLocation)
            }
            return KilledRunResult(killed: false, status: 127, stdout: [], stderr: "")
        }

        waitBeforeKill(pid)

        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) != pid {
            // Still running (or exiting this very moment: a zombie still holds its pid, so this is safe).
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        return KilledRunResult(killed: (status & 0x7f) == SIGKILL, status: ProcessRunner.exitCode(status),
                               stdout: FileBytes.read(outPath) ?? [],
                               stderr: PamWrapperDirs.droppingNoise(FileText.read(errPath) ?? ""))
    }

    /// Starts a program and kills it (as `run` does) the moment the `count`-th file is renamed into
    /// `folder` (an inotify `IN_MOVED_TO` for a name not starting with `.tmp-`: an atomic replace landing),
    /// or after `atMost`, or when it exits first. So the kill lands at a point chosen from the program's
    /// observed progress, not from a guess of its timing; it may still get a little further before the
    /// signal arrives. `renamesSeen` in the result says how many renames the kill followed.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                           killAtRename count: Int, in folder: String, atMost: Duration, scratch: String,
                           sourceLocation: SourceLocation = #_sourceLocation) -> (result: KilledRunResult, renamesSeen: Int) {
        let watch = inotify_init1(Int32(0o2000000 | 0o4000))  // IN_CLOEXEC | IN_NONBLOCK
        guard watch >= 0, inotify_add_watch(watch, folder, 0x0000_0080 /* IN_MOVED_TO */) >= 0 else {
            Issue.record("inotify on \(folder) failed: \(String(cString: strerror(errno)))", sourceLocation: sourceLocation)
            if watch >= 0 { close(watch) }
            return (KilledRunResult(killed: false, status: 127, stdout: [], stderr: ""), 0)
        }
        defer { close(watch) }
        var seen = 0
        let result = runOnce(executable, arguments, environment: environment, scratch: scratch,
                             sourceLocation: sourceLocation) { pid in
            let deadline = ContinuousClock.now + atMost
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while seen < count, ContinuousClock.now < deadline {
                if hasExited(pid) { return }
                var poller = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 5) > 0 else { continue }
                let n = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
                guard n > 0 else { continue }
                var at = 0
                while at + 16 <= n {  // struct inotify_event: wd, mask, cookie, len, then the name
                    let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: at + 12, as: UInt32.self)) }
                    let name = String(decoding: buffer[(at + 16)..<min(n, at + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    if !name.hasPrefix(".tmp-") { seen += 1 }
                    at += 16 + length
                }
            }
        }
        return (result, seen)
    }

    /// Whether `pid` (a child not yet waited for) has exited: a zombie, state Z in /proc/PID/stat.
    private static func hasExited(_ pid: pid_t) -> Bool {
        guard let stat = FileText.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].hasPrefix(" Z")
    }
}
#endif
