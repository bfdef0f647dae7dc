#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Where the PAM conversation gets its answers: standard input when the command was given
/// `--password-stdin`; else the `VAULT_ASKPASS` program when set, otherwise the terminal with echo off,
/// otherwise nowhere (an error that says how to provide one).
public enum PasswordSource: PromptRelay {
    case askpass(String)
    case terminal
    /// One line of standard input per question, as `sudo -S` and `docker login --password-stdin` take it
    /// (a trailing CR is dropped). No prompt is shown: nobody reads one on a pipe.
    case standardInput
    case none

    /// Longest answer accepted from a person.
    public static let limit = 4096

    public static func fromEnvironment() -> PasswordSource {
        if let program = Locations.env("VAULT_ASKPASS") { return .askpass(program) }
        return Terminal.isAvailable ? .terminal : .none
    }

    /// How to fix `.none`.
    public static let howToProvide =
        "no terminal to ask for your password on; set VAULT_ASKPASS to a program that prints it (as SSH_ASKPASS does), or run vaultctl from a terminal"

    /// Shows one of PAM's messages (PAM_TEXT_INFO, PAM_ERROR_MSG) as one line on standard error.
    public func show(_ text: String, isError: Bool) {
        // One line whatever the module (or a gate peer) sent: no control character, C1 included, reaches the terminal.
        let line = "vaultctl: \(SlotErrorText.oneLine(text, limit: 1000))\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    /// Asks one question (`prompt` says why already: `PAMGate`'s conversation says it); the error text says
    /// what went wrong (never the answer). `answer` (`PromptRelay`) refuses an answer PAM cannot take.
    public func ask(_ prompt: String, echo: Bool) -> Result<SecretBytes, VaultError> {
        switch self {
        case .askpass(let program):
            // The policy is valid by now: the rate limit read it before this prompt.
            let seconds = PolicyReading(configFolder: Locations.fromEnvironment().config).forPrompt().askpassSeconds
            switch Askpass.ask(program: program, prompt: prompt, limit: PasswordSource.limit,
                               answerSeconds: Double(seconds)) {
            case .success(let s):
                // A line ending in CR-LF (a script written on another system): the CR is nobody's password.
                if s.withUnsafeBytes({ $0.last == 0x0D }) { s.truncate(to: s.count - 1) }
                // No output, an empty line, or output closed without a line: no answer is not a wrong
                // answer, so PAM never sees it and the rate limit does not count it. (An echo-on question may
                // be answered with nothing: "press ENTER".)
                if s.isEmpty && !echo {
                    return .failure(.notAuthenticated("the askpass program \(program) gave no password (no output, or an empty line), so nothing was answered"))
                }
                return .success(s)
            case .failure(.couldNotRun(let p, let e)):
                return .failure(.notAuthenticated("could not run the askpass program \(p) (\(String(cString: strerror(e)))); check VAULT_ASKPASS"))
            case .failure(.declined(let p, let code)):
                return .failure(.notAuthenticated("the askpass program \(p) exited with status \(code), so nothing was answered"))
            case .failure(.noAnswer(let p, let seconds)):
                return .failure(.notAuthenticated("the askpass program \(p) did not answer within \(seconds) s and was stopped, so nothing was answered"))
            case .failure(.tooLong):
                return .failure(.notAuthenticated("the askpass program answered with more than \(PasswordSource.limit) bytes"))
            }
        case .standardInput:
            switch SecretReader.readLine(fd: 0, limit: PasswordSource.limit) {
            case .line(let s):
                // A line from a file saved with CRLF ends in "\r", which nobody typed as part of a password.
                if s.withUnsafeBytes({ $0.last == 0x0D }) { s.truncate(to: s.count - 1) }
                return .success(s)
            case .endOfInput:
                return .failure(.notAuthenticated("standard input ended before a line for PAM's question; with --password-stdin give one line per question (usually just the password), or leave the option out"))
            case .tooLong:
                return .failure(.notAuthenticated("the line on standard input is longer than \(PasswordSource.limit) bytes, more than any password; give the password alone on the first line"))
            case .failed(let e):
                return .failure(.notAuthenticated("could not read standard input for --password-stdin (\(String(cString: strerror(e))))"))
            }
        case .terminal:
            switch Terminal.ask(prompt: prompt, limit: PasswordSource.limit, echo: echo) {
            case .line(let s): return .success(s)
            // Ctrl-D at the prompt is a cancel, as Ctrl-C is: not an empty password, not a failure.
            case .cancelled: return .failure(.cancelledPrompt)
            case .unavailable: return .failure(.notAuthenticated(PasswordSource.howToProvide))
            }
        case .none:
            return .failure(.notAuthenticated(PasswordSource.howToProvide))
        }
    }
}
