import Slots

/// Where PAM's conversation (`PAMGate`) takes its questions and messages: the CLI's own sources
/// (`PasswordSource`: the terminal, an askpass program, standard input), or, in vaultctl-gate, the CLI that
/// asked for the authentication (`GateRelay`), which asks the person in one of those ways.
public protocol PromptRelay: Sendable {
    /// Asks `prompt` (already saying why: "vaultctl (read slot 'x'): Password: "), with echo on only for
    /// PAM's echo-on questions; the error text says what went wrong (never the answer).
    func ask(_ prompt: String, echo: Bool) -> Result<SecretBytes, VaultError>
    /// Shows one of PAM's messages (PAM_TEXT_INFO, PAM_ERROR_MSG).
    func show(_ text: String, isError: Bool)
}

extension PromptRelay {
    /// Asks `prompt` (`ask`) for an answer PAM can take: PAM takes it as a C string, so an answer with a NUL,
    /// which would silently cut it short, is refused.
    public func answer(_ prompt: String, echo: Bool) -> Result<SecretBytes, VaultError> {
        switch ask(prompt, echo: echo) {
        case .success(let answer) where answer.withUnsafeBytes({ $0.contains(0) }):
            answer.wipe()
            return .failure(.notAuthenticated("the password answer contains a NUL byte, which PAM cannot take"))
        case let other:
            return other
        }
    }
}
