import Slots

/// Proves a person is present before a secret is read: a fresh authentication every time, no cache.
public protocol PresenceGate: Sendable {
    /// Throws `VaultError.authenticationFailed` (77) when the person could not be verified.
    func verify(reason: String) throws(VaultError)
    /// The same, saying which slots the authentication is for (nil: the vault itself, no slot): a gate that
    /// grants access slot by slot (`vaultctl-gate`) grants exactly these. See the default below.
    func verify(reason: String, slots: [SlotName]?) throws(VaultError)
}

/// A gate that can say the moment a password has been handed over, before it knows the verdict. The rate
/// limit uses it: a process killed after that moment (perhaps because the answer was slow to come, which
/// can betray a wrong guess) counts as a failure; one interrupted at the prompt does not.
public protocol AnswerReportingGate: PresenceGate {
    /// `onAnswer` runs before the answer reaches PAM; when it returns false (the attempt could not be
    /// recorded as answered), PAM gets no answer and the authentication fails as not attempted.
    func verify(reason: String, onAnswer: @escaping () -> Bool) throws(VaultError)
}

extension PresenceGate {
    /// A gate that authenticates the person, not an access: the slots change nothing.
    public func verify(reason: String, slots: [SlotName]?) throws(VaultError) { try verify(reason: reason) }
}
