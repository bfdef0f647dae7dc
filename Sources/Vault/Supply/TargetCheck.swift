#if canImport(Glibc)
import Glibc
#endif

/// `--if-locked PROGRAM`: a command line run with `/bin/sh -c` that exits 0 while the target still needs
/// the secret (it is still locked). Asked before the prompt and again right before delivery.
public struct TargetCheck: Sendable {
    public let program: String

    public init(program: String) {
        self.program = program
    }

    /// After a delivery: whether the target is unlocked now, giving it up to a second to notice.
    public func unlockedSoon() -> Bool {
        for attempt in 0..<5 {
            if !stillLocked().locked { return true }
            if attempt < 4 { usleep(200_000) }
        }
        return false
    }

    /// Whether the target still needs the secret, and the check's exit status.
    public func stillLocked() -> (locked: Bool, status: Int32) {
        let started = Spawn.start(["/bin/sh", "-c", program]) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            // Its output goes to stderr: with askpass, stdout is the secret's channel.
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        }
        guard case .success(let pid) = started else { return (false, 127) }
        let status = Spawn.wait(pid)
        return (status == 0, status)
    }
}
