#if canImport(Glibc)
import Glibc
#endif
import CSystem
import GateProtocol
import Slots
import VaultRules

/// Runs child programs: started the careful way (`ChildSpawn`: close-on-exec pipes, a clean signal mask,
/// only descriptors 0, 1 and 2), found in PATH as `posix_spawnp` would, waited for and ended.
public enum Spawn {
    /// A pipe whose both ends are close-on-exec from the start (`ChildSpawn.pipe`).
    static func pipe() -> (read: Int32, write: Int32)? { ChildSpawn.pipe() }

    /// Spawns `argv[0]` (searched in PATH) with the file actions `setup` adds (`ChildSpawn.start`).
    static func start(_ argv: [String], ownGroup: Bool = false, actions setup: (inout posix_spawn_file_actions_t) -> Void) -> Result<pid_t, SpawnError> {
        ChildSpawn.start(argv, ownGroup: ownGroup, actions: setup).mapError { SpawnError(errno: $0.errno) }
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

    /// Ends a child started with `ownGroup` that outstayed its bound, with all its group (a `sh -c`'s
    /// children too): SIGTERM, up to 2 s to go, then SIGKILL; reaps the child.
    static func endGroup(_ pid: pid_t) {
        _ = Glibc.kill(-pid, SIGTERM)
        if wait(pid, atMost: 2) == nil {
            _ = Glibc.kill(-pid, SIGKILL)
            _ = wait(pid)
        }
        // Whatever of the group outlived the leader.
        _ = Glibc.kill(-pid, SIGKILL)
    }

    struct SpawnError: Error {
        let errno: Int32
    }
}
