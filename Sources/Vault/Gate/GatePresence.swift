import GateProtocol
import Slots
import VaultRules

/// The presence gate of a protected vault: the authentication happens in `vaultctl-gate` (lock, rate
/// limit, PAM as the real user, audit line), which then lets this command's exchange read and change.
public struct GatePresence: PresenceGate {
    public let client: GateClient

    public init(client: GateClient) { self.client = client }

    /// Without slots: no slot is opened by it (the gate refuses to read or change one on its strength).
    public func verify(reason: String) throws(VaultError) {
        _ = try client.request(.authenticate(.none, reason: reason))
    }

    public func verify(reason: String, slots: [SlotName]?) throws(VaultError) {
        _ = try client.request(.authenticate(slots.map { .slots($0) } ?? .none, reason: reason))
    }
}
