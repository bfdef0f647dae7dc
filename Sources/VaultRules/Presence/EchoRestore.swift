#if canImport(Glibc)
import Glibc
#endif

/// Restores the terminal's settings if a signal ends vaultctl while echo is off, then lets the signal take
/// its default course. The state is process-global because a signal handler can reach nothing else.
///
/// `Terminal` arms it around a prompt with echo off; `AuthenticationDeadline` puts the echo back through
/// it before it ends the process. In vaultctl-gate nothing arms it, so that does nothing there.
public enum EchoRestore {
    nonisolated(unsafe) private static var fd: Int32 = -1
    /// The settings to put back, in memory of its own: kept in a static `termios`, setting it overwrote the
    /// static laid out after it (its symbol is 57 bytes here, the type 60).
    nonisolated(unsafe) private static let saved: UnsafeMutablePointer<termios> = {
        let p = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        p.initialize(to: termios())
        return p
    }()
    /// Set once at start-up, before any prompt: the command line's own SIGINT handler (which says
    /// "cancelled" and puts the echo back through `restoreNow`) stays in place while a prompt has echo off.
    nonisolated(unsafe) private static var leavesSIGINT = false
    private static var signals: [Int32] { leavesSIGINT ? [SIGTERM, SIGHUP, SIGQUIT] : [SIGINT, SIGTERM, SIGHUP, SIGQUIT] }

    /// From now on, a prompt leaves SIGINT to the command line's handler (see `leavesSIGINT`). Set from this
    /// module, where the static's lazy initialisation cannot run after the assignment.
    public static func leaveSIGINTToCaller() {
        _ = fd
        _ = saved  // made now, never first in a signal handler
        leavesSIGINT = true
    }

    package static func arm(fd: Int32, saved: termios) {
        EchoRestore.saved.pointee = saved
        EchoRestore.fd = fd
        for s in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                if EchoRestore.fd >= 0 { _ = tcsetattr(EchoRestore.fd, TCSANOW, EchoRestore.saved) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
            sigemptyset(&action.sa_mask)
            sigaction(s, &action, nil)
        }
    }

    /// Puts the terminal back as it was, if a prompt has echo off now (the authentication's deadline ends the
    /// process from another thread, where no signal passes through the handler).
    public static func restoreNow() {
        if fd >= 0 { _ = tcsetattr(fd, TCSANOW, saved) }
    }

    package static func disarm() {
        fd = -1
        for s in signals { signal(s, SIG_DFL) }
    }
}
