#if canImport(Glibc)
import Glibc
#endif

/// `--if-locked PROGRAM`: a command line run with `/bin/sh -c` that exits 0 while the target still needs
/// the secret (it is still locked). Asked before the prompt and again right before delivery.
public struct TargetCheck: Sendable {
    public let program: String
    /// The longest a run may take before it is killed (nil: no bound, as for supply, whose person sees it
    /// hang and can stop it); a run killed at the bound has status 124 (as timeout(1)) and is not "locked".
    public let seconds: Double?

    /// Whether its stdout and stderr are /dev/null (`receive`: ours are the sender's channel and terminal)
    /// rather than our stderr.
    public var quiet = false

    /// The status of a run killed at its bound.
    public static let timedOutStatus: Int32 = 124

    public init(program: String) {
        self.init(program: program, seconds: nil)
    }

    public init(program: String, seconds: Double?) {
        self.program = program
        self.seconds = seconds
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
            if quiet {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            } else {
                // Its output goes to stderr: with askpass, stdout is the secret's channel.
                posix_spawn_file_actions_adddup2(&actions, 2, 1)
            }
        }
        guard case .success(let pid) = started else { return (false, 127) }
        guard let seconds else {
            let status = Spawn.wait(pid)
            return (status == 0, status)
        }
        guard let status = Spawn.wait(pid, atMost: seconds) else {
            Spawn.kill(pid)
            return (false, TargetCheck.timedOutStatus)
        }
        return (status == 0, status)
    }
}
