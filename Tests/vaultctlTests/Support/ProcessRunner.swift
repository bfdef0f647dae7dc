#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// What a child process is given on standard input.
enum Stdin: Sendable {
    /// `/dev/null`: reads see end of file at once.
    case null
    /// These exact bytes through a pipe, then end of file.
    case bytes([UInt8])
    /// A pseudo-terminal nobody types on (not the child's controlling terminal: `isatty(0)` is true).
    case terminal
    /// No descriptor 0 at all (`<&-`).
    case closed

    static func text(_ s: String) -> Stdin { .bytes(Array(s.utf8)) }
}

/// How a child process ended and what it said.
struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or 128 + the signal number when it was killed.
    let status: Int32
    /// The exact bytes written to standard output (a pipe, so not a terminal).
    let stdout: [UInt8]
    /// Standard error as text (lossy for invalid UTF-8).
    let stderr: String
    let elapsed: Duration
    /// Whether the runner killed it for taking too long.
    let timedOut: Bool

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// The same result without pam_wrapper's own diagnostics in stderr (lines starting `PWRAP_`): the
    /// preloaded library prints them when parallel processes race on its `/tmp/pam.X` folders. They are
    /// not vaultctl's words.
    func droppingPAMWrapperNoise() -> ProcessResult {
        guard stderr.contains("PWRAP_") else { return self }
        let kept = stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("PWRAP_") }
            .joined(separator: "\n")
        return ProcessResult(status: status, stdout: stdout, stderr: kept, elapsed: elapsed, timedOut: timedOut)
    }

    var description: String {
        "status \(status)\(timedOut ? " (killed after timeout)" : ""), \(stdout.count) bytes on stdout, stderr: \(stderr.debugDescription), \(elapsed)"
    }
}

/// Runs a program with `posix_spawn`: a controlled environment, stdin bytes through a pipe, stdout and
/// stderr captured through pipes, its own session (so it has no controlling terminal and can never prompt
/// on the developer's one), and a deadline after which its whole process group is killed.
enum ProcessRunner {
    static let defaultTimeout: Duration = .seconds(30)

    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    stdin: Stdin = .null, timeout: Duration = ProcessRunner.defaultTimeout,
                    sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        var result = runOnce(executable, arguments, environment: environment, stdin: stdin, timeout: timeout,
                             sourceLocation: sourceLocation)
        // pam_wrapper (the test tool, not the product) now and then fails pam_start under heavy parallel
        // load when it juggles its /tmp/pam.X folders; that is not a result worth asserting on, so such a
        // run is tried again a few times. A wrong password or any other PAM answer is never retried.
        var tries = 1
        while tries < 4, PamWrapperDirs.isWrapperStartFailure(result.status, result.stderr) {
            print("pam_wrapper could not start PAM, running again: \(result.stderr)")  // visible in the test log
            PamWrapperDirs.sweepStale()
            result = runOnce(executable, arguments, environment: environment, stdin: stdin, timeout: timeout,
                             sourceLocation: sourceLocation)
            tries += 1
        }
        return result
    }

    private static func runOnce(_ executable: String, _ arguments: [String], environment: [String: String],
                                stdin: Stdin, timeout: Duration, sourceLocation: SourceLocation) -> ProcessResult {
        _ = ignoreSIGPIPE
        if environment["LD_PRELOAD"] != nil { PamWrapperDirs.sweepStale() }
        let clock = ContinuousClock()
        let start = clock.now

        // Pipes are made and marked close-on-exec under the same lock as the spawn, so a child started by
        // another test at the same moment never inherits them (Glibc's module does not export pipe2).
        spawnLock.lock()
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        var inPipe: [Int32] = [-1, -1]
        guard makePipe(&outPipe), makePipe(&errPipe) else { fatalError("pipe failed: errno \(errno)") }
        var stdinBytes: [UInt8] = []
        var childStdin: Int32
        var terminalMaster: Int32 = -1
        defer { if terminalMaster >= 0 { close(terminalMaster) } }
        switch stdin {
        case .null, .closed:
            childStdin = open("/dev/null", O_RDONLY | O_CLOEXEC)
        case .terminal:
            guard let (master, name) = PseudoTerminal.open() else { fatalError("no pseudo-terminal: errno \(errno)") }
            terminalMaster = master
            childStdin = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        case .bytes(let bytes):
            guard makePipe(&inPipe) else { fatalError("pipe failed: errno \(errno)") }
            childStdin = inPipe[0]
            stdinBytes = bytes
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if case .closed = stdin {
            posix_spawn_file_actions_addclose(&actions, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, childStdin, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // Descriptors other code in the test process left without close-on-exec (Foundation's atomic writes
        // do) must not leak into the child: a script still open for writing cannot be executed.
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
        // POSIX_SPAWN_SETSID (0x80) is a GNU extension Glibc's Swift module does not export.
        let setsid: Int32 = 0x80
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
        spawnLock.unlock()
        close(childStdin)
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            if inPipe[1] >= 0 { close(inPipe[1]) }
            Issue.record("Could not start \(executable): \(String(cString: strerror(rc)))", sourceLocation: sourceLocation)
            return ProcessResult(status: 127, stdout: [], stderr: "", elapsed: clock.now - start, timedOut: false)
        }

        var stdinFD: Int32 = inPipe[1]
        var stdinOffset = 0
        if stdinFD >= 0 {
            _ = fcntl(stdinFD, F_SETFL, fcntl(stdinFD, F_GETFL) | O_NONBLOCK)
            if stdinBytes.isEmpty {
                close(stdinFD)
                stdinFD = -1
            }
        }
        var outFD = outPipe[0]
        var errFD = errPipe[0]
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
        let deadline = start + timeout
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

        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let result = ProcessResult(status: code, stdout: out, stderr: String(decoding: err, as: UTF8.self),
                                   elapsed: clock.now - start, timedOut: timedOut)
        if timedOut {
            Issue.record("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) and was killed",
                         sourceLocation: sourceLocation)
        }
        return result
    }

    private static let spawnLock = NSLock()

    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// Writing to a child that closed its stdin must be an EPIPE error here, not a signal that ends the
    /// test process. Children get default signal handling back (POSIX_SPAWN_SETSIGDEF).
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()
}

/// A new pseudo-terminal: the master descriptor and the slave's path. Glibc's Swift module does not export
/// posix_openpt and its companions (they need _XOPEN_SOURCE), so they are looked up at run time.
enum PseudoTerminal {
    private typealias OpenPT = @convention(c) (Int32) -> Int32
    private typealias OnMaster = @convention(c) (Int32) -> Int32
    private typealias NameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

    static func open() -> (Int32, String)? {
        guard let handle = dlopen(nil, RTLD_NOW),
              let openpt = dlsym(handle, "posix_openpt"), let grant = dlsym(handle, "grantpt"),
              let unlock = dlsym(handle, "unlockpt"), let name = dlsym(handle, "ptsname_r") else { return nil }
        let master = unsafeBitCast(openpt, to: OpenPT.self)(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { return nil }
        var path = [CChar](repeating: 0, count: 128)
        guard unsafeBitCast(grant, to: OnMaster.self)(master) == 0,
              unsafeBitCast(unlock, to: OnMaster.self)(master) == 0,
              unsafeBitCast(name, to: NameR.self)(master, &path, path.count) == 0 else {
            close(master)
            return nil
        }
        let length = path.firstIndex(of: 0) ?? path.count
        return (master, String(decoding: path[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
