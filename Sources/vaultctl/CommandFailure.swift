import VaultRules

/// An error that ends the command: one line for stderr, an exit code, and the result its audit line says.
struct CommandFailure: Error {
    let code: ExitCode
    let message: String
    /// The audit line's result when the failure decides it (a password judged wrong, a cancel), set where the
    /// failure is made from what happened (`ErrorReport.failure`); nil: the exit code decides. Never read
    /// back from `message`, whose words may quote anything.
    let result: AuditResult?

    init(code: ExitCode, message: String, result: AuditResult? = nil) {
        self.code = code
        self.message = message
        self.result = result
    }

    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(code: .usage, message: "\(message) See 'vaultctl --help'.")
    }

    /// The result of the command's audit line: its own, else refused for a refusal (77) or a block (75),
    /// failed for 1, error for the rest.
    var auditResult: AuditResult {
        if let result { return result }
        switch code {
        case .denied, .tryLater: return .refused
        case .failure: return .failed
        default: return .error
        }
    }
}
