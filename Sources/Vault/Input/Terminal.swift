#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Asks a person on the controlling terminal (`/dev/tty`) with echo off, as `ssh` and `sudo` do; when there
/// is none (after `su -`, or in a process that left its session) but standard input and standard error are
/// both terminals, asks there, as `sudo` does. Never on a non-terminal.
public enum Terminal {
    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Whether there is a terminal to ask on.
    public static var isAvailable: Bool {
        guard let t = open() else { return false }
        t.close()
        return true
    }

    /// What a question on the terminal got.
    public enum Answer {
        case line(SecretBytes)
        /// End of input before anything was typed (Ctrl-D at the prompt): the person cancelled.
        case cancelled
        /// No terminal to ask on.
        case unavailable
    }

    /// Where to ask: the input to read, the output to prompt on, and whether they were opened here.
    struct Device {
        let input: Int32
        let output: Int32
        let opened: Bool

        func close() { if opened { _ = Glibc.close(input) } }
    }

    static func open() -> Device? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if fd >= 0 { return Device(input: fd, output: fd, opened: true) }
        if isTerminal(0) && isTerminal(2) { return Device(input: 0, output: 2, opened: false) }
        return nil
    }

    /// Prints `prompt` on the terminal and reads one line with echo off; nil when there is no terminal or
    /// the person cancelled.
    public static func readSecret(prompt: String, limit: Int) -> SecretBytes? {
        guard case .line(let s) = ask(prompt: prompt, limit: limit) else { return nil }
        return s
    }

    /// Prints `prompt` on the terminal and reads one line, with echo off unless `echo` (PAM's echo-on
    /// questions: "press ENTER", a user name).
    public static func ask(prompt: String, limit: Int, echo: Bool = false) -> Answer {
        guard let device = open() else { return .unavailable }
        defer { device.close() }
        let fd = device.input
        var saved = termios()
        let haveTermios = !echo && tcgetattr(fd, &saved) == 0
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
        _ = prompt.withCString { write(device.output, $0, strlen($0)) }
        switch SecretReader.readLine(fd: fd, limit: limit) {
        case .line(let secret): return .line(secret)
        case .endOfInput:
            // No newline was echoed: end the prompt's line.
            _ = "\n".withCString { write(device.output, $0, 1) }
            return .cancelled
        case .tooLong, .failed: return .unavailable
        }
    }
}
