/// The `result` word of the line a command or an authentication ends with (`AuditEntry.result`), for the
/// endings every command shares; a command's own words ("handed-over", "kept", …) are its own.
public enum AuditResult: String, Sendable {
    /// It did what it was asked.
    case ok
    /// A counted failure: a password PAM judged wrong, a program that did not accept the secret.
    case failed
    /// Said no without judging a password: a check, the rate limit's block, the vault lock, no way to ask.
    case refused
    /// Ctrl-D at a prompt: nothing was answered.
    case cancelled
    /// Anything else.
    case error
}

extension AuditResult {
    /// The word an authentication's outcome decides by itself, from the error's case and never its words: ok
    /// (no failure), failed (a password judged wrong, with or without the block it started), cancelled (the
    /// password prompt cancelled). Nil for any other failure: its word is the caller's (the CLI's from its
    /// exit code, the gate's "error").
    public init?(authentication failure: VaultError?) {
        switch failure {
        case nil: self = .ok
        case .authenticationFailed?, .authenticationFailedAndBlocked?: self = .failed
        case let failure? where failure.isCancelledPrompt: self = .cancelled
        default: return nil
        }
    }
}
