#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Hands a secret to a program on its standard input, followed by EOF: never in its argv or environment.
public enum Delivery {
    /// Runs `command` (searched in PATH) with the secret on stdin; returns its exit status (128+N for a
    /// signal, 127 when it could not start).
    public static func toStdin(_ command: [String], _ secret: SecretBytes) -> Int32 {
        guard !command.isEmpty, let input = Spawn.pipe() else { return 127 }
        let started = Spawn.start(command) { actions in
            posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        }
        close(input.read)
        guard case .success(let pid) = started else {
            close(input.write)
            return 127
        }
        // A secret is at most 64 KiB, which a fresh pipe holds whole, so this write cannot block on a
        // program that never reads; one that exits early makes it fail with EPIPE (SIGPIPE is ignored).
        secret.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(input.write, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    break
                }
                done += n
            }
        }
        close(input.write)
        return Spawn.wait(pid)
    }
}
