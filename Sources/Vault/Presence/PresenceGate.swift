/// Proves a person is present before a secret is read: a fresh authentication every time, no cache.
public protocol PresenceGate: Sendable {
    /// Throws `VaultError.authenticationFailed` (77) when the person could not be verified.
    func verify(reason: String) throws(VaultError)
}

/// A gate that can say the moment a password has been handed over, before it knows the verdict. The rate
/// limit uses it: a process killed after that moment (perhaps because the answer was slow to come, which
/// can betray a wrong guess) counts as a failure; one interrupted at the prompt does not.
public protocol AnswerReportingGate: PresenceGate {
    func verify(reason: String, onAnswer: @escaping () -> Void) throws(VaultError)
}
