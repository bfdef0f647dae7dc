#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Hands a secret to a program on its standard input, followed by EOF: never in its argv or environment.
public enum Delivery {
    /// How a delivery ended: COMMAND's exit status (128+N for a signal, 127 when it could not start), and
    /// whether it read any of the secret.
    public struct Outcome: Sendable, Equatable {
        public let status: Int32
        /// False when every byte was still in the pipe when COMMAND ended: it never read its stdin.
        public let readAny: Bool
        /// Whether COMMAND was killed at the bound it was given.
        public var timedOut = false
    }

    /// Runs `command` (searched in PATH) with the secret on stdin and waits for it: without a bound, or
    /// at most `seconds`, then kills it (`timedOut`).
    ///
    /// `quiet`: its stdout and stderr are /dev/null instead of ours. `receive` needs that: its own stdout is
    /// the protocol channel to the sender and its stderr reaches the sender's terminal through ssh.
    /// `ownGroup`: it runs in a process group of its own, ended as a whole at the bound (`Spawn.endGroup`).
    public static func toStdin(_ command: [String], _ secret: SecretBytes, atMost seconds: Double? = nil,
                               quiet: Bool = false, ownGroup: Bool = false) -> Outcome {
        // The pipe holds the whole secret, so the write below cannot block on a program that never reads;
        // without the room, nothing starts.
        guard !command.isEmpty, let input = ChildSpawn.pipe(holding: secret.count) else { return Outcome(status: 127, readAny: false) }
        let started = Spawn.start(command, ownGroup: ownGroup) { actions in
            posix_spawn_file_actions_adddup2(&actions, input.read, 0)
            if quiet {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            }
        }
        guard case .success(let pid) = started else {
            close(input.read)
            close(input.write)
            return Outcome(status: 127, readAny: false)
        }
        // The pipe holds the whole secret (above), so this write cannot block on a program that never
        // reads. Our copy of the read end stays open until COMMAND has ended, to see
        // how much of the secret it left unread (it is closed, and the rest discarded, right after).
        let written = secret.withUnsafeBytes { ChildSpawn.writeAll(input.write, $0) }
        close(input.write)
        var timedOut = false
        let status: Int32
        if let seconds {
            if let ended = Spawn.wait(pid, atMost: seconds) {
                status = ended
            } else {
                if ownGroup { Spawn.endGroup(pid) } else { Spawn.kill(pid) }
                status = 128 + SIGKILL
                timedOut = true
            }
        } else {
            status = Spawn.wait(pid)
        }
        var unread: Int32 = 0
        let asked = ioctl(input.read, UInt(FIONREAD), &unread)
        close(input.read)
        var outcome = Outcome(status: status, readAny: asked != 0 || Int(unread) < written)
        outcome.timedOut = timedOut
        return outcome
    }
}
