import GateProtocol
import Slots
import VaultRules

extension Vault {
    /// What a move did.
    public enum MoveOutcome: Equatable, Sendable {
        case moved(from: SlotMode)
        /// The value already was in the target slot; the record was brought up to date, and a leftover copy
        /// in the other slot removed (`removedCopy`), one that held another value (`differed`) or not; nil
        /// when nothing was removed, or the copies were not compared (the policy lets deletes go without
        /// PAM, and comparing reads both).
        case alreadyThere(removedCopy: Bool, differed: Bool?)
    }

    /// Moves `name` to the `target` slot: pin the record to the source, write the target, read it back and
    /// compare, record the target, then delete the source. A kill at any moment leaves a complete, readable
    /// value: until the target is verified and recorded, the record points reads at the untouched source.
    ///
    /// The move reads the secret, so it passes the presence gate first. A value already in the target slot
    /// (and recorded there) moves nothing, so it asks nothing, unless a copy is left in the other slot (an interrupted store or
    /// move, a store while the collection was locked): removing that copy may lose a value, so it is gated
    /// as a delete is (`gate.delete`). What was let through without a prompt is done only if it still holds
    /// under the change lock (`changedMeanwhile`, 75, otherwise).
    public func move(_ name: SlotName, to target: SlotMode) throws(VaultError) -> MoveOutcome {
        _ = try record.load()  // a record we cannot update stops the move before anything is written
        try record.checkLock()
        let (source, locked, leftovers, recorded) = try steadily { () throws(VaultError) in
            let (source, locked) = try locate(name)
            return (source, locked, source == target ? leftCopies(name, besides: target) : [], try record.lookup(name))
        }
        var authorized = MoveAuthority.none
        // Pointing the record at the target slot when it names another (or none) changes which copy reads
        // serve, should the other slot hold one this process cannot see: that is a move, asked for as one.
        if source != target || recorded != .recorded(target) {
            // A locked value is refused before the prompt, unless its slot can ask a person to unlock it (the
            // provider's own prompt on a desktop, after PAM), as a read does.
            if locked && source != target && !slot(source).canAskToUnlock {
                throw .slot(slot(source).lockedValue("slot '\(name)'"))
            }
            // The prompt comes before the change lock, so a slow answer holds up no other store.
            try gate.verify(reason: PromptReason.move(name, to: target).text, slots: [name])
            authorized = .move
            // The provider's own prompt for a locked value, now: no wait for a person holds the change lock.
            if locked && source != target {
                do { try slot(source).unlockBeforeChange(name) } catch { throw .slot(error) }
            }
        } else if let leftover = leftovers.first {
            // (A copy in a locked collection cannot be removed now: it is left, as before, and nothing asked.)
            if try changeGates().delete {
                try gate.verify(reason: PromptReason.removeLeftCopy(name, in: leftover).text, slots: [name])
                authorized = .removeLeftover(verified: true)
            } else {
                authorized = .removeLeftover(verified: false)
            }
        }
        return try serialized { () throws(VaultError) -> MoveOutcome in try moveLocked(name, to: target, authorized) }
    }

    /// The slots besides `target` that hold a copy of `name` that can be removed now (a copy in a locked
    /// collection cannot: it is left, and nothing is asked for it).
    private func leftCopies(_ name: SlotName, besides target: SlotMode) -> [SlotMode] {
        modes.filter { $0 != target && slot($0).holding(name) == .holds(locked: false) }
    }

    /// What the person allowed before the change lock was taken.
    enum MoveAuthority {
        /// Nothing was asked: the value was in the target slot with no copy elsewhere.
        case none
        /// PAM for moving the value between the slots.
        case move
        /// Removing a copy left in the other slot: after PAM (`verified`), or the policy does not gate deletes.
        case removeLeftover(verified: Bool)
    }

    /// The move itself, under the change lock; the slot is looked up again, as another process may have
    /// changed it while the person answered the prompt. Only what `authorized` covers is done.
    private func moveLocked(_ name: SlotName, to target: SlotMode, _ authorized: MoveAuthority) throws(VaultError) -> MoveOutcome {
        let (source, locked) = try locate(name)
        if source == target {
            if try record.lookup(name) != .recorded(target) {
                guard case .move = authorized else { throw .changedMeanwhile(name) }
            }
            let leftovers = leftCopies(name, besides: target)
            guard !leftovers.isEmpty else {
                try record.set(name, target)
                return .alreadyThere(removedCopy: false, differed: nil)
            }
            // Finish what an interrupted move or store left: no copy stays behind in the other slot. The
            // copy may hold another value than the one kept, so it goes only with the person's (or the
            // policy's) leave, and the two are compared (after PAM only: comparing reads both) to say which.
            let verified: Bool
            switch authorized {
            case .none: throw .changedMeanwhile(name)
            case .move: verified = true  // the person allowed moving it here, which leaves no copy behind
            case .removeLeftover(let v): verified = v
            }
            var differed: Bool?
            if verified {
                let kept = try readValue(target, name)
                differed = leftovers.contains { copy in (try? readValue(copy, name)).map { !$0.constantTimeEquals(kept) } ?? true }
            }
            try record.set(name, target)
            for leftover in leftovers { try deleteValue(leftover, name) }
            return .alreadyThere(removedCopy: true, differed: differed)
        }
        // The value is elsewhere than it was when the person was asked: moving it needs a move's prompt.
        guard case .move = authorized else { throw .changedMeanwhile(name) }
        // Unlocked before the change lock (the provider's prompt after PAM); locked now, it was locked again
        // meanwhile: refused, never a prompt that waits for a person while the lock is held.
        if locked {
            throw .slot(slot(source).lockedValue("slot '\(name)'"))
        }
        let value: SecretBytes
        value = try readValue(source, name)
        try record.set(name, source)
        try writeValue(target, name, value)
        let verified: Bool
        do { verified = try readValue(target, name).constantTimeEquals(value) } catch {
            _ = try? deleteValue(target, name)
            throw error
        }
        guard verified else {
            _ = try? deleteValue(target, name)  // never leave an unchecked copy for a later read to find
            throw .slot(.tampered(path: "the \(target.rawValue) slot", detail: "the value read back differs from the one written, so the source was kept"))
        }
        try record.set(name, target)
        try deleteValue(source, name)
        return .moved(from: source)
    }
}
