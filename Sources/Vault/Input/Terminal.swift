#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Asks a person on the controlling terminal (`/dev/tty`) with echo off, as `ssh` and `sudo` do.
public enum Terminal {
    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Whether this process has a controlling terminal to ask on.
    public static var isAvailable: Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if fd < 0 { return false }
        close(fd)
        return true
    }

    /// Prints `prompt` on the terminal and reads one line with echo off; nil when there is no terminal.
    public static func readSecret(prompt: String, limit: Int) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        let haveTermios = tcgetattr(fd, &saved) == 0
        if haveTermios {
            // Ctrl-C (or a hangup, or kill) while echo is off must not leave the terminal silent.
            EchoRestore.arm(fd: fd, saved: saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if haveTermios {
                _ = tcsetattr(fd, TCSAFLUSH, &saved)
                EchoRestore.disarm()
            }
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        guard case .bytes(let secret) = SecretReader.read(fd: fd, limit: limit, stopAtNewline: true) else {
            return nil
        }
        return secret
    }
}

/// Restores the terminal's settings if a signal ends vaultctl while echo is off, then lets the signal take
/// its default course. The state is process-global because a signal handler can reach nothing else.
enum EchoRestore {
    nonisolated(unsafe) private static var fd: Int32 = -1
    nonisolated(unsafe) private static var saved = termios()
    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func arm(fd: Int32, saved: termios) {
        EchoRestore.saved = saved
        EchoRestore.fd = fd
        for s in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                if EchoRestore.fd >= 0 { _ = tcsetattr(EchoRestore.fd, TCSANOW, &EchoRestore.saved) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
            sigemptyset(&action.sa_mask)
            sigaction(s, &action, nil)
        }
    }

    static func disarm() {
        fd = -1
        for s in signals { signal(s, SIG_DFL) }
    }
}
