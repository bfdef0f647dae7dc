#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

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
    /// Whether it runs in a process group of its own, ended as a whole at its bound (`receive`).
    public var ownGroup = false

    /// The status of a run killed at its bound.
    public static let timedOutStatus: Int32 = 124

    public init(program: String) {
        self.init(program: program, seconds: nil)
    }

    public init(program: String, seconds: Double?) {
        self.program = program
        self.seconds = seconds
    }

    /// After a delivery: whether the target is unlocked now (a check's exit other than 0, not its being
    /// killed at a bound), giving it up to a second to notice; with a
    /// `deadline`, no run goes past it (each gets the time left, at most `seconds`) and none starts after it.
    public func unlockedSoon(by deadline: Deadline? = nil) -> Bool {
        for attempt in 0..<5 {
            if let deadline, deadline.remainingMilliseconds == 0 { return false }
            // A run killed at its bound says nothing, least of all that the target is unlocked.
            let run = stillLocked(by: deadline)
            if !run.locked && run.status != TargetCheck.timedOutStatus { return true }
            if attempt < 4 { usleep(200_000) }
        }
        return false
    }

    /// Whether the target still needs the secret, and the check's exit status; with a `deadline`, the run
    /// is bounded by the time left too (killed at it: `timedOutStatus`).
    public func stillLocked(by deadline: Deadline? = nil) -> (locked: Bool, status: Int32) {
        var seconds = self.seconds
        if let deadline {
            let left = Double(deadline.remainingMilliseconds) / 1000
            seconds = min(seconds ?? left, left)
        }
        let started = Spawn.start(["/bin/sh", "-c", program], ownGroup: ownGroup) { actions in
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
            if ownGroup { Spawn.endGroup(pid) } else { Spawn.kill(pid) }
            return (false, TargetCheck.timedOutStatus)
        }
        return (status == 0, status)
    }
}
