import GateProtocol
import Slots
import VaultRules

extension Vault {
    /// The recovery code's status: where it is, and whether the person marked this very code as copied.
    public struct RecoveryStatus: Sendable {
        public let location: LocationStatus
        /// nil when it could not be checked (the code could not be read without prompting).
        public let copied: Bool?
    }

    /// Stores a new random recovery code in place of any old one. The code is not shown.
    ///
    /// Replacing a code is a store over a value (PAM unless `gate.storeOver` is false). Replacing one the
    /// person marked as written down needs `replace` and PAM whatever the policy says: that code is the one
    /// way back into an account. The mark belongs to a code, not to the slot: a mark left from an earlier
    /// code (a `generate --replace` cut short) does not count. When the code cannot be told from the mark
    /// without reading it (a device code whose sealed form changed since: sealed again, moved, or marked by
    /// an older vaultctl), it is read after PAM and compared. The mark is removed once the new code is in,
    /// when it was the replaced code's.
    public func generateRecoveryCode(mode: SlotMode, replace: Bool = false, mark: CopiedMark? = nil) throws(VaultError) -> StoreOutcome {
        let held = try steadily { () throws(VaultError) in try loadMode(RecoveryCode.slot) }
        var marked = false
        var verified = false
        if let mark, held != .none, try mark.isPresent() {
            switch try markState(mark) {
            case .marked: marked = true
            case .notMarked: marked = false
            case .uncertain:
                try gate.verify(reason: PromptReason.replaceRecoveryCode.text, slots: [RecoveryCode.slot])
                verified = true
                let code = try steadily { () throws(VaultError) -> SecretBytes in
                    try readAfterGate(RecoveryCode.slot, from: try locate(RecoveryCode.slot).mode)
                }
                marked = try mark.matches(code)
            }
        }
        if marked && !replace {
            throw .needsOption("The recovery code in slot '\(RecoveryCode.slot)' is marked as written down; replacing it makes the copy you wrote down useless. If that is what you want, run 'vaultctl recovery generate --replace' (it asks for your password).")
        }
        let wasEmpty = verified ? false : try confirmStore(RecoveryCode.slot, mode: mode, always: marked)
        let code = RecoveryCode.generate()
        let outcome = try store(RecoveryCode.slot, code, mode: mode, expectingEmpty: wasEmpty)
        if marked { try mark?.clear() }
        return outcome
    }

    /// Whether the mark was made for the code in the slot, as far as can be told without reading a device
    /// code: a device code by its sealed file's tag (a match is certain; a mismatch may be the same code
    /// sealed again), a sync code by comparing it inside this process.
    private enum MarkState { case marked, notMarked, uncertain }

    private func markState(_ mark: CopiedMark) throws(VaultError) -> MarkState {
        let location = try status(RecoveryCode.slot)
        guard let mode = location.mode else { return location.state == .none ? .notMarked : .uncertain }
        if let tag = slot(mode).storedTag(of: RecoveryCode.slot) {
            return try mark.matches(storedTag: tag) ? .marked : .uncertain
        }
        guard mode == .sync, let code = try? slot(mode).read(RecoveryCode.slot) else { return .uncertain }
        return try mark.matches(code) ? .marked : .notMarked
    }

    /// Location status plus the copied mark. Nothing is decrypted and no device key is opened (a status
    /// needs no PAM, so it must not unseal): a device-slot code is judged by its sealed file's public tag,
    /// which the mark recorded when the person confirmed. A sync-slot code has no such tag; it is compared
    /// inside this process (never shown, no prompt), which opens no device key and asks no TPM.
    public func recoveryStatus(mark: CopiedMark) throws(VaultError) -> RecoveryStatus {
        let location = try status(RecoveryCode.slot)
        switch location.state {
        case .none:
            return RecoveryStatus(location: location, copied: false)
        case .unknown:
            return RecoveryStatus(location: location, copied: nil)
        case .inSlot, .cannotLeaveDevice, .onThisDevice:
            guard let mode = location.mode else { return RecoveryStatus(location: location, copied: nil) }
            if let tag = slot(mode).storedTag(of: RecoveryCode.slot) {
                return RecoveryStatus(location: location, copied: try mark.matches(storedTag: tag))
            }
            guard mode == .sync, let code = try? slot(mode).read(RecoveryCode.slot) else {
                return RecoveryStatus(location: location, copied: nil)
            }
            return RecoveryStatus(location: location, copied: try mark.matches(code))
        }
    }

    /// Sets the copied mark for the code now in the slot. The mark is bound to the code itself (a keyed
    /// fingerprint) and to its stored form, so reading the code is needed: that read passes the presence
    /// gate (fresh PAM) like any other, after the checks that need no prompt (no code, a locked one).
    public func confirmRecoveryCopied(mark: CopiedMark) throws(VaultError) {
        let (mode, locked) = try steadily { () throws(VaultError) in try locate(RecoveryCode.slot, beforeRead: true) }
        if locked && !slot(mode).canAskToUnlock {
            throw .slot(slot(mode).lockedValue("the recovery code"))
        }
        try gate.verify(reason: PromptReason.markRecoveryCodeWrittenDown.text, slots: [RecoveryCode.slot])
        let (code, tag) = try steadily { () throws(VaultError) -> (SecretBytes, [UInt8]?) in
            let code = try readAfterGate(RecoveryCode.slot, from: mode)
            let now = (try? locate(RecoveryCode.slot))?.mode ?? mode
            return (code, slot(now).storedTag(of: RecoveryCode.slot))
        }
        try mark.set(for: code, storedTag: tag)
    }
}
