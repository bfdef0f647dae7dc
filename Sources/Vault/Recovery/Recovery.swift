import Slots

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
    /// person marked as written down (a copied mark is there) needs `replace` and PAM whatever the policy
    /// says: that code is the one way back into an account. The mark is removed once the new code is in.
    public func generateRecoveryCode(mode: SlotMode, replace: Bool = false, mark: CopiedMark? = nil) throws(VaultError) -> StoreOutcome {
        let marked = try mark?.isPresent() ?? false
        let held = try steadily { () throws(VaultError) in try loadMode(RecoveryCode.slot) }
        if marked && held != .none && !replace {
            throw .needsOption("The recovery code in slot '\(RecoveryCode.slot)' is marked as written down; replacing it makes the copy you wrote down useless. If that is what you want, run 'vaultctl recovery generate --replace' (it asks for your password).")
        }
        let wasEmpty = try confirmStore(RecoveryCode.slot, always: marked)
        let code = RecoveryCode.generate()
        let outcome = try store(RecoveryCode.slot, code, mode: mode, expectingEmpty: wasEmpty)
        if marked { try mark?.clear() }
        return outcome
    }

    /// Location status plus the copied mark, checked against the code in the slot (read inside this
    /// process, never shown, no prompt).
    public func recoveryStatus(mark: CopiedMark) throws(VaultError) -> RecoveryStatus {
        let location = try status(RecoveryCode.slot)
        switch location.state {
        case .none:
            return RecoveryStatus(location: location, copied: false)
        case .unknown:
            return RecoveryStatus(location: location, copied: nil)
        case .inSlot, .cannotLeaveDevice:
            guard let mode = location.mode, let code = try? slot(mode).read(RecoveryCode.slot) else {
                return RecoveryStatus(location: location, copied: nil)
            }
            return RecoveryStatus(location: location, copied: try mark.matches(code))
        }
    }

    /// Sets the copied mark for the code now in the slot. The person confirms they wrote it down; no
    /// secret is shown, so no authentication is needed.
    public func confirmRecoveryCopied(mark: CopiedMark) throws(VaultError) {
        let code = try steadily { () throws(VaultError) -> SecretBytes in
            let (mode, locked) = try locate(RecoveryCode.slot)
            if locked {
                throw .slot(.lockedValue("the recovery code"))
            }
            do throws(SlotError) { return try slot(mode).read(RecoveryCode.slot) } catch { throw .slot(error) }
        }
        try mark.set(for: code)
    }
}
