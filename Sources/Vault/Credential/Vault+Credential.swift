import GateProtocol
import Slots
import VaultRules

extension Vault {
    /// git's `erase`: deletes each of `names` that holds exactly `password` (compared in constant time
    /// inside this process; no stored value is returned). Returns the names it found holding a value
    /// (`touched`) and those deleted (`erased`).
    ///
    /// Comparing reads the stored values, and a read of a device slot opens the device key (with a TPM, an
    /// unseal): so it passes the presence gate first, once for all the names, and only when one of them
    /// holds a value. Each comparison and its delete happen in one hold of the change lock, so a value
    /// stored meanwhile is compared, never deleted unseen. Without a password (git sends one with every
    /// reject) nothing is read or deleted.
    /// `compared` is told each slot's outcome as it happens (erased or not), so a failure at a later slot
    /// still leaves a record of the earlier ones.
    public func eraseCredential(_ names: [SlotName], matching password: SecretBytes?,
                                compared: (SlotName, _ erased: Bool) -> Void = { _, _ in }) throws(VaultError) -> (touched: [SlotName], erased: [SlotName]) {
        guard let password else { return ([], []) }
        var held: [SlotName] = []
        try steadily { () throws(VaultError) in
            for name in names where try heldMode(name) != nil {
                held.append(name)
            }
        }
        guard !held.isEmpty else { return ([], []) }
        try gate.verify(reason: PromptReason.eraseRejectedCredential(held).text, slots: held)
        var erased: [SlotName] = []
        for name in held {
            let gone = try serialized { () throws(VaultError) -> Bool in try eraseLocked(name, matching: password) }
            if gone { erased.append(name) }
            compared(name, gone)
        }
        return (held, erased)
    }

    /// Deletes `name` if it holds exactly `password`, deciding on what is there now (the caller holds the
    /// change lock); whether it did.
    private func eraseLocked(_ name: SlotName, matching password: SecretBytes) throws(VaultError) -> Bool {
        guard let mode = try heldMode(name) else { return false }
        guard try holds(name, in: mode, exactly: password) else { return false }
        do { _ = try deleteLocked(name) } catch {
            if case .slot(.empty) = error { return false }
            throw error
        }
        return true
    }

    /// The slot that holds `name` (`locate`, with its errors), nil when none does.
    private func heldMode(_ name: SlotName) throws(VaultError) -> SlotMode? {
        do { return try locate(name).mode } catch {
            if case .slot(.empty) = error { return nil }
            throw error
        }
    }

    /// Whether `name`, found in `mode`, holds exactly `candidate` (the caller passed the gate and holds the
    /// change lock); false when it is gone.
    private func holds(_ name: SlotName, in mode: SlotMode, exactly candidate: SecretBytes) throws(VaultError) -> Bool {
        let stored: SecretBytes
        do { stored = try readAfterGate(name, from: mode) } catch {
            if case .slot(.empty) = error { return false }
            throw error
        }
        return stored.constantTimeEquals(candidate)
    }
}
