import GateProtocol
import Slots
import VaultRules

/// A slot whose reads and changes may themselves need an authentication, done by something the vault does
/// not control (the device slot behind `vaultctl-gate`): its errors are the vault's (a wrong password, the
/// rate limit), not only the slot's.
public protocol GatedSlot: Slot {
    func gatedRead(_ name: SlotName) throws(VaultError) -> SecretBytes
    func gatedWrite(_ name: SlotName, _ secret: SecretBytes) throws(VaultError)
    func gatedDelete(_ name: SlotName) throws(VaultError) -> Bool
}

extension Vault {
    /// Reads `name` from the `mode` slot, through its gate when it has one.
    func readValue(_ mode: SlotMode, _ name: SlotName) throws(VaultError) -> SecretBytes {
        if let gated = slot(mode) as? any GatedSlot { return try gated.gatedRead(name) }
        do { return try slot(mode).read(name) } catch { throw .slot(error) }
    }

    func writeValue(_ mode: SlotMode, _ name: SlotName, _ secret: SecretBytes) throws(VaultError) {
        if let gated = slot(mode) as? any GatedSlot { return try gated.gatedWrite(name, secret) }
        if mode == .device, let beforeDeviceWrite { try beforeDeviceWrite(name) }
        do { try slot(mode).write(name, secret) } catch { throw .slot(error) }
    }

    @discardableResult
    func deleteValue(_ mode: SlotMode, _ name: SlotName) throws(VaultError) -> Bool {
        if let gated = slot(mode) as? any GatedSlot { return try gated.gatedDelete(name) }
        do { return try slot(mode).delete(name) } catch { throw .slot(error) }
    }
}

extension Vault {
    /// A vault error's words inside another message (or a log line): `VaultError.reason`.
    public static func reason(_ e: VaultError) -> String { VaultError.reason(e) }
}
