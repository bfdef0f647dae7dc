/// Proves a person is present before a secret is read: a fresh authentication every time, no cache.
public protocol PresenceGate: Sendable {
    /// Throws `VaultError.authenticationFailed` (77) when the person could not be verified.
    func verify(reason: String) throws(VaultError)
}
