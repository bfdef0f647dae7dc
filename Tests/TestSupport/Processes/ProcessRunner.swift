// Duration and ContinuousClock are in the concurrency module, which the release build of this target
// (`make release`) lacks; only the tests run programs.
#if canImport(Testing)
#if canImport(Glibc)
import Glibc
#endif
import Slots
import Testing

/// Runs a program for a test: a controlled environment, stdin bytes through a pipe, stdout and stderr
/// captured through pipes, and a deadline after which its whole process group is killed. The one process
/// runner of every test target (`KillRunner` starts its programs the same way).
///
/// Children start through the product's own spawn (`ChildSpawn.start`), so the tests run programs exactly
/// as vaultctl does: close-on-exec pipes, only descriptors 0, 1 and 2, the signal mask emptied. Each child
/// leads a process group of its own, so a deadline kills what it started too. The test process gives up its
/// controlling terminal before the first child starts, so no child can ever prompt on the developer's one:
/// opening `/dev/tty` fails for it as it does under `make test` without a terminal.
public enum ProcessRunner {
    public static let defaultTimeout: Duration = .seconds(30)

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                           stdin: Stdin = .null, timeout: Duration = ProcessRunner.defaultTimeout,
                           sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        PamWrapperDirs.retryingStartFailures({
            runOnce(executable, arguments, environment: environment, stdin: stdin, timeout: timeout, sourceLocation: sourceLocation)
        }, ended: { ($0.status, $0.stderr) })
    }

    /// Starts a program that outlives the call (a guard that waits for the test process to end), its
    /// descriptors 0, 1 and 2 on /dev/null; nil when it could not be started.
    @discardableResult
    public static func startDetached(_ executable: String, _ arguments: [String],
                                     environment: [String: String]) -> pid_t? {
        let started = start(executable, arguments, environment: environment) { actions in
            for fd: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        return try? started.get()
    }

    /// Starts `executable` with `arguments` and exactly `environment`, the file actions `setup` adds, in a
    /// process group of its own (its pid is the group's id).
    static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                      actions setup: (inout posix_spawn_file_actions_t) -> Void) -> Result<pid_t, ChildSpawn.SpawnFailure> {
        _ = withoutControllingTerminal
        return ChildSpawn.start([executable] + arguments, searchingPATH: false, ownGroup: true,
                                environment: environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" },
                                actions: setup)
    }

    /// The exit status of a `waitpid` status, or 128 + the signal number when a signal ended it.
    static func exitCode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    private static func runOnce(_ executable: String, _ arguments: [String], environment: [String: String],
                                stdin: Stdin, timeout: Duration, sourceLocation: SourceLocation) -> ProcessResult {
        _ = ignoreSIGPIPE
        if environment["LD_PRELOAD"] != nil { PamWrapperDirs.sweepStale() }
        let clock = ContinuousClock()
        let begun = clock.now

        guard let outPipe = ChildSpawn.pipe(), let errPipe = ChildSpawn.pipe() else { fatalError("pipe failed: errno \(errno)") }
        var inPipe: (read: Int32, write: Int32)? = nil
        var childStdin: Int32 = -1
        var terminalMaster: Int32 = -1
        defer { if terminalMaster >= 0 { close(terminalMaster) } }
        switch stdin {
        case .null:
            childStdin = open("/dev/null", O_RDONLY | O_CLOEXEC)
        case .closed:
            break
        case .terminal:
            guard let (master, name) = PseudoTerminal.open() else { fatalError("no pseudo-terminal: errno \(errno)") }
            terminalMaster = master
            childStdin = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        case .bytes:
            guard let p = ChildSpawn.pipe() else { fatalError("pipe failed: errno \(errno)") }
            inPipe = p
            childStdin = p.read
        }

        let started = start(executable, arguments, environment: environment) { actions in
            if childStdin >= 0 {
                posix_spawn_file_actions_adddup2(&actions, childStdin, 0)
            } else {
                posix_spawn_file_actions_addclose(&actions, 0)
            }
            posix_spawn_file_actions_adddup2(&actions, outPipe.write, 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe.write, 2)
        }
        if childStdin >= 0 { close(childStdin) }
        close(outPipe.write)
        close(errPipe.write)
        let pid: pid_t
        switch started {
        case .success(let p):
            pid = p
        case .failure(let failure):
            close(outPipe.read)
            close(errPipe.read)
            if let inPipe { close(inPipe.write) }
            Issue.record("Could not start \(executable): \(String(cString: strerror(failure.errno)))", sourceLocation: sourceLocation)
            return ProcessResult(status: 127, stdout: [], stderr: "", elapsed: clock.now - begun, timedOut: false)
        }

        var stdinBytes: [UInt8] = []
        if case .bytes(let bytes) = stdin { stdinBytes = bytes }
        var stdinFD: Int32 = inPipe?.write ?? -1
        var stdinOffset = 0
        if stdinFD >= 0 {
            _ = fcntl(stdinFD, F_SETFL, fcntl(stdinFD, F_GETFL) | O_NONBLOCK)
            if stdinBytes.isEmpty {
                close(stdinFD)
                stdinFD = -1
            }
        }
        var outFD = outPipe.read
        var errFD = errPipe.read
        _ = fcntl(outFD, F_SETFL, fcntl(outFD, F_GETFL) | O_NONBLOCK)
        _ = fcntl(errFD, F_SETFL, fcntl(errFD, F_GETFL) | O_NONBLOCK)
        var out: [UInt8] = []
        var err: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)

        /// Reads what is available; closes the descriptor (and sets it to -1) at end of file.
        func drain(_ fd: inout Int32, into sink: inout [UInt8]) {
            while fd >= 0 {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n > 0 {
                    sink += chunk[..<n]
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    close(fd)
                    fd = -1
                }
                return
            }
        }

        var status: Int32 = 0
        var exited = false
        var timedOut = false
        let deadline = begun + timeout
        while !exited {
            var fds: [pollfd] = []
            if stdinFD >= 0 { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
            if outFD >= 0 { fds.append(pollfd(fd: outFD, events: Int16(POLLIN), revents: 0)) }
            if errFD >= 0 { fds.append(pollfd(fd: errFD, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&fds, nfds_t(fds.count), fds.isEmpty || (outFD < 0 && errFD < 0) ? 2 : 50)
            if stdinFD >= 0 {
                let n = stdinBytes.withUnsafeBytes { raw in
                    write(stdinFD, raw.baseAddress! + stdinOffset, raw.count - stdinOffset)
                }
                if n > 0 { stdinOffset += n }
                // Done, or the child closed its end (EPIPE): either way, end of its input.
                if stdinOffset == stdinBytes.count || (n < 0 && errno != EAGAIN && errno != EINTR) {
                    close(stdinFD)
                    stdinFD = -1
                }
            }
            drain(&outFD, into: &out)
            drain(&errFD, into: &err)
            let w = waitpid(pid, &status, WNOHANG)
            if w == pid {
                exited = true
                break
            }
            if clock.now >= deadline {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                exited = true
                timedOut = true
            }
        }
        // What it wrote before exiting is in the pipes; a grandchild that kept them open (a daemon) is not
        // waited for.
        drain(&outFD, into: &out)
        drain(&errFD, into: &err)
        for fd in [stdinFD, outFD, errFD] where fd >= 0 { close(fd) }

        let result = ProcessResult(status: exitCode(status), stdout: out, stderr: String(decoding: err, as: UTF8.self),
                                   elapsed: clock.now - begun, timedOut: timedOut)
        if timedOut {
            Issue.record("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) and was killed",
                         sourceLocation: sourceLocation)
        }
        return result
    }

    /// Writing to a child that closed its stdin must be an EPIPE error here, not a signal that ends the
    /// test process. Children get SIGPIPE's default back (`ChildSpawn`).
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Gives up the test process's controlling terminal (`TIOCNOTTY`), once, so that no child it starts
    /// has one: the children are no session's leaders (the product's spawn makes process groups, not
    /// sessions). Only a process that does not lead its session: a leader's `TIOCNOTTY` would hang up its
    /// whole foreground group (the developer's shell job). The test process stays in its process group, so
    /// Ctrl-C still reaches it.
    private static let withoutControllingTerminal: Void = {
        guard getsid(0) != getpid() else { return }
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { return }  // none already
        _ = ioctl(tty, UInt(TIOCNOTTY))
        close(tty)
    }()
}
#endif
