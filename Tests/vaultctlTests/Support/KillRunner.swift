#if canImport(Glibc)
import Glibc
#endif
import Testing

/// How a run that `KillRunner` may have cut short ended.
struct KilledRunResult: Sendable, CustomStringConvertible {
    /// Whether SIGKILL ended it (false: it exited on its own before the delay ran out).
    let killed: Bool
    /// The exit status, or 128 + the signal number.
    let status: Int32
    let stdout: [UInt8]
    let stderr: String

    var description: String {
        killed ? "killed by SIGKILL" : "exited with status \(status), stderr: \(stderr.debugDescription)"
    }
}

/// Starts a program and sends SIGKILL to it (and its process group: its askpass child too) after a delay,
/// unless it has already exited. Like a power cut for that process: no handler, no cleanup.
///
/// The child runs in its own session (no terminal), stdin is /dev/null, and stdout and stderr go to files
/// in `scratch` so nothing depends on pipes being drained. Descriptors 3 and up are closed in the child.
enum KillRunner {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Glibc's Swift module does not export.
    static let addCloseFrom: AddCloseFrom? = {
        guard let handle = dlopen(nil, RTLD_NOW),
              let symbol = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    killAfter delay: Duration, scratch: String,
                    sourceLocation: SourceLocation = #_sourceLocation) -> KilledRunResult {
        // A run that pam_wrapper (the test tool) could not start PAM for says nothing about the product:
        // try it again, as ProcessRunner does.
        var result = runOnce(executable, arguments, environment: environment, killAfter: delay, scratch: scratch,
                             sourceLocation: sourceLocation)
        var tries = 1
        while tries < 4, !result.killed, PamWrapperDirs.isWrapperStartFailure(result.status, result.stderr) {
            print("pam_wrapper could not start PAM, running again: \(result.stderr)")  // visible in the test log
            PamWrapperDirs.sweepStale()
            result = runOnce(executable, arguments, environment: environment, killAfter: delay, scratch: scratch,
                             sourceLocation: sourceLocation)
            tries += 1
        }
        return result
    }

    private static func runOnce(_ executable: String, _ arguments: [String], environment: [String: String],
                                killAfter delay: Duration, scratch: String,
                                sourceLocation: SourceLocation) -> KilledRunResult {
        if environment["LD_PRELOAD"] != nil { PamWrapperDirs.sweepStale() }
        let outPath = "\(scratch)/killed.stdout"
        let errPath = "\(scratch)/killed.stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Pipes another test's runner made a moment ago may not be close-on-exec yet: never inherit them.
        if let closeFrom = KillRunner.addCloseFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | setsid))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            Issue.record("Could not start \(executable): \(String(cString: strerror(rc)))", sourceLocation: sourceLocation)
            return KilledRunResult(killed: false, status: 127, stdout: [], stderr: "")
        }

        let (seconds, attoseconds) = delay.components
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var rest = timespec()
        while nanosleep(&pause, &rest) != 0 && errno == EINTR { pause = rest }

        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) != pid {
            // Still running (or exiting this very moment: a zombie still holds its pid, so this is safe).
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let signalled = (status & 0x7f) != 0
        let code = signalled ? 128 + (status & 0x7f) : (status >> 8) & 0xff
        return KilledRunResult(killed: signalled && (status & 0x7f) == SIGKILL, status: code,
                               stdout: FileBytes.read(outPath) ?? [],
                               stderr: (FileText.read(errPath) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                                   .filter { !$0.hasPrefix("PWRAP_") }.joined(separator: "\n"))
    }
}
