#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Slots

/// Starts a child program the careful way: pipes created close-on-exec atomically, the child's signal mask
/// emptied and SIGPIPE (which vaultctl ignores) back to its default, and only descriptors 0, 1 and 2: every
/// other one is closed in the child, even those vaultctl itself inherited without close-on-exec.
public enum Spawn {
    /// A pipe whose both ends are close-on-exec from the start. The corresponding C function is `pipe2`.
    static func pipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard vaultctl_pipe_cloexec(&fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// Spawns `argv[0]` (searched in PATH) with the file actions `setup` adds; returns the pid or an errno.
    static func start(_ argv: [String], actions setup: (inout posix_spawn_file_actions_t) -> Void) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        setup(&actions)
        // After the dups `setup` asked for: nothing but 0, 1 and 2 reaches the program.
        guard vaultctl_spawn_closefrom(&actions, 3) == 0 else { return .failure(SpawnError(errno: errno)) }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cArgs, environ)
        return rc == 0 ? .success(pid) : .failure(SpawnError(errno: rc))
    }

    /// Where `posix_spawnp` would find `program`: itself when it names a path (has a `/`), else the first
    /// folder of `PATH` (default `/bin:/usr/bin`, as glibc's execvp) holding a regular file of that name.
    /// `executable` says whether it may be run (`access(X_OK)`); nil when there is no such file.
    public static func resolve(_ program: String) -> (path: String, executable: Bool)? {
        func check(_ path: String) -> (String, Bool)? {
            var st = stat()
            guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
            return (path, access(path, X_OK) == 0)
        }
        if program.contains("/") { return check(program) }
        guard !program.isEmpty else { return nil }
        let search = Locations.env("PATH") ?? "/bin:/usr/bin"
        var found: (String, Bool)?
        for folder in search.split(separator: ":", omittingEmptySubsequences: false) {
            let dir = folder.isEmpty ? "." : String(folder)
            if let hit = check("\(dir)/\(program)") {
                if hit.1 { return hit }
                found = found ?? hit
            }
        }
        return found
    }

    /// Waits for `pid`; returns its exit status, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return 127 }
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Waits at most `seconds` for `pid`; its exit status (as `wait`), or nil when it is still running.
    static func wait(_ pid: pid_t, atMost seconds: Double) -> Int32? {
        let deadline = Deadline(secondsFromNow: seconds)
        var pause: UInt32 = 1000
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if r < 0 && errno != EINTR { return 127 }
            if deadline.remainingMilliseconds == 0 { return nil }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
    }

    /// Ends a child that outstayed its bound: SIGKILL, then reaps it.
    static func kill(_ pid: pid_t) {
        _ = Glibc.kill(pid, SIGKILL)
        _ = wait(pid)
    }

    struct SpawnError: Error {
        let errno: Int32
    }
}
