import Slots

extension Vault {
    /// What a move did.
    public enum MoveOutcome: Equatable, Sendable {
        case moved(from: SlotMode)
        /// The value already was in the target slot; the record was brought up to date, and a leftover copy
        /// in the other slot removed (`removedCopy`).
        case alreadyThere(removedCopy: Bool)
    }

    /// Moves `name` to the `target` slot: pin the record to the source, write the target, read it back and
    /// compare, record the target, then delete the source. A kill at any moment leaves a complete, readable
    /// value: until the target is verified and recorded, the record points reads at the untouched source.
    ///
    /// The move reads the secret, so it passes the presence gate first.
    public func move(_ name: SlotName, to target: SlotMode) throws(VaultError) -> MoveOutcome {
        _ = try record.load()  // a record we cannot update stops the move before anything is written
        try record.checkLock()
        let (source, locked) = try steadily { () throws(VaultError) in try locate(name) }
        if source != target {
            if locked {
                throw .slot(.lockedValue(name))
            }
            // The prompt comes before the change lock, so a slow answer holds up no other store.
            try gate.verify(reason: "move slot '\(name)' to the \(target.rawValue) slot")
        }
        return try serialized { () throws(VaultError) -> MoveOutcome in try moveLocked(name, to: target) }
    }

    /// The move itself, under the change lock; the slot is looked up again, as another process may have
    /// changed it while the person answered the prompt.
    private func moveLocked(_ name: SlotName, to target: SlotMode) throws(VaultError) -> MoveOutcome {
        let (source, locked) = try locate(name)
        let other = slot(target == .device ? .sync : .device)
        if source == target {
            try record.set(name, target)
            // Finish what an interrupted move or store left: no copy stays behind in the other slot.
            if case .holds(locked: false) = other.holding(name) {
                do { try other.delete(name) } catch { throw .slot(error) }
                return .alreadyThere(removedCopy: true)
            }
            return .alreadyThere(removedCopy: false)
        }
        if locked {
            throw .slot(.lockedValue(name))
        }
        let value: SecretBytes
        do { value = try slot(source).read(name) } catch { throw .slot(error) }
        try record.set(name, source)
        do { try slot(target).write(name, value) } catch { throw .slot(error) }
        let verified: Bool
        do { verified = try slot(target).read(name).constantTimeEquals(value) } catch {
            _ = try? slot(target).delete(name)
            throw .slot(error)
        }
        guard verified else {
            _ = try? slot(target).delete(name)  // never leave an unchecked copy for a later read to find
            throw .slot(.tampered(path: "the \(target.rawValue) slot", detail: "the value read back differs from the one written, so the source was kept"))
        }
        try record.set(name, target)
        do { try slot(source).delete(name) } catch { throw .slot(error) }
        return .moved(from: source)
    }
}
