#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Starts a child program the careful way, for every program vaultctl runs (COMMAND, CHECK, the askpass
/// program, the clipboard tools, the TPM helper): pipes created close-on-exec atomically, the child's signal
/// mask emptied and SIGPIPE (which vaultctl ignores) back to its default, and only descriptors 0, 1 and 2:
/// every other one is closed in the child, even those vaultctl itself inherited without close-on-exec.
public enum ChildSpawn {
    /// A pipe whose both ends are close-on-exec from the start. The corresponding C function is `pipe2`.
    public static func pipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard vaultctl_pipe_cloexec(&fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// A close-on-exec pipe that holds `count` bytes unread, so writing them cannot block on a child that
    /// never reads: 64 KiB is the default, but a user over pipe-user-pages-soft gets 8 KiB pipes, so room is
    /// asked for (`F_SETPIPE_SZ`); nil when the kernel does not give it.
    public static func pipe(holding count: Int) -> (read: Int32, write: Int32)? {
        guard let p = pipe() else { return nil }
        guard fcntl(p.write, 1031 /* F_SETPIPE_SZ */, Int32(max(count, 4096))) >= count else {
            close(p.read)
            close(p.write)
            return nil
        }
        return p
    }

    /// Writes all of `bytes` to `fd`, again after EINTR; how many were written before an error.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            done += n
        }
        return done
    }

    /// Spawns `argv[0]` (searched in PATH when `searchingPATH`, else the exact path) with the file actions
    /// `setup` adds; the pid, or the errno of the failure. The corresponding C functions are `posix_spawnp`
    /// and `posix_spawn`. With `ownGroup`, the child leads a new process group (its pid is the group's id),
    /// so it can be ended together with whatever it started.
    /// `environment`: the child's whole environment ("NAME=value" each); nil: this process's own.
    /// `programName`: the child's own argv[0], when it is not the path it is started from.
    public static func start(_ argv: [String], searchingPATH: Bool = true, ownGroup: Bool = false,
                             environment: [String]? = nil, programName: String? = nil,
                             actions setup: (inout posix_spawn_file_actions_t) -> Void) -> Result<pid_t, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        setup(&actions)
        // Each word's own bytes, invalid UTF-8 and all (`ArgumentBytes`).
        let cArgs: [UnsafeMutablePointer<CChar>?] = ((programName.map { [$0] } ?? [argv[0]]) + argv.dropFirst()).map { word in
            ArgumentBytes.bytes(of: word).withUnsafeBufferPointer { b in
                let p = UnsafeMutablePointer<CChar>.allocate(capacity: b.count + 1)
                b.withMemoryRebound(to: CChar.self) { p.update(from: $0.baseAddress!, count: b.count) }
                p[b.count] = 0
                return p
            }
        } + [nil]
        defer { cArgs.forEach { $0?.deallocate() } }
        let cEnv: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { cEnv?.forEach { free($0) } }
        var pid: pid_t = 0
        // CSystem's spawn.h: the child set-up every started program gets (the gate's start uses it too).
        let rc = (cEnv ?? []).withUnsafeBufferPointer { given -> Int32 in
            vaultctl_spawn(&pid, argv[0], searchingPATH ? 1 : 0, ownGroup ? 1 : 0, &actions, cArgs,
                           cEnv == nil ? environ : UnsafeMutablePointer(mutating: given.baseAddress!))
        }
        return rc == 0 ? .success(pid) : .failure(SpawnFailure(errno: rc))
    }

    /// Why a child could not be started: the errno `posix_spawn` (or its file actions) returned.
    public struct SpawnFailure: Error, Sendable {
        public let errno: Int32
    }
}
