#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Clears the clipboard after a while, but only if it still holds the secret that was put there.
///
/// A forked process in its own session (so it outlives the command and holds none of its caller's
/// descriptors) waits, reads the clipboard back and clears it when its keyed BLAKE2b digest matches the
/// secret's. Nothing is written anywhere: the process keeps a random key and the digest, never the secret
/// (its copy of the parent's memory is wiped at once), and what it reads back stays in `SecretBytes`.
public enum ClipboardClearer {
    /// Starts the clearing process; false when it could not be started (the clipboard is then not cleared).
    public static func schedule(_ clipboard: Clipboard, holding secret: SecretBytes, after seconds: Int) -> Bool {
        let key = SecretBytes.random(count: 32)
        let digest = secret.withUnsafeBytes { Hashing.keyedHash(message: $0, key: key) }
        let pid = fork()
        if pid < 0 { return false }
        if pid > 0 { return true }
        // The child: forget the secret, leave the caller's session and descriptors, wait, compare, clear.
        secret.wipe()
        // The command's Ctrl-C handler (a "cancelled" line in the audit log) is not this process's; an
        // ignored SIGINT (vaultctl started as a background job) stays ignored.
        if !SignalDisposition.isIgnored(SIGINT) { signal(SIGINT, SIG_DFL) }
        _ = setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            for fd: Int32 in [0, 1, 2] { dup2(null, fd) }
            if null > 2 { close(null) }
        }
        for fd: Int32 in 3..<1024 { close(fd) }  // the bus connection, a log: none of the child's business
        var left = timespec(tv_sec: seconds, tv_nsec: 0)
        var rest = timespec()
        while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
        if let now = clipboard.contents() {
            let current = now.withUnsafeBytes { Hashing.keyedHash(message: $0, key: key) }
            if current.constantTimeEquals(digest) { clipboard.clear() }
        }
        _exit(0)
    }
}
