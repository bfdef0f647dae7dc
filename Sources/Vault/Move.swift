import Slots

extension Vault {
    /// What a move did.
    public enum MoveOutcome: Equatable, Sendable {
        case moved(from: SlotMode)
        /// The value already was in the target slot; only the record was brought up to date.
        case alreadyThere
    }

    /// Moves `name` to the `target` slot: write the target, read it back and compare, update the record,
    /// then delete the source. A kill at any moment leaves a complete, readable value (in the source until
    /// the target is verified, in both for a moment after).
    ///
    /// The move reads the secret, so it passes the presence gate first.
    public func move(_ name: SlotName, to target: SlotMode) throws(VaultError) -> MoveOutcome {
        _ = try record.load()  // a record we cannot update stops the move before anything is written
        let (source, locked) = try locate(name)
        if source == target {
            try record.set(name, target)
            return .alreadyThere
        }
        if locked {
            throw .slot(.locked("slot '\(name)' is in a locked collection; unlock your keyring and try again"))
        }
        try gate.verify(reason: "move slot '\(name)' to the \(target.rawValue) slot")
        let value: SecretBytes
        do { value = try slot(source).read(name) } catch { throw .slot(error) }
        do { try slot(target).write(name, value) } catch { throw .slot(error) }
        let check: SecretBytes
        do { check = try slot(target).read(name) } catch { throw .slot(error) }
        guard check.constantTimeEquals(value) else {
            throw .slot(.tampered(path: "the \(target.rawValue) slot", detail: "the value read back differs from the one written, so the source was kept"))
        }
        try record.set(name, target)
        do { try slot(source).delete(name) } catch { throw .slot(error) }
        return .moved(from: source)
    }
}
