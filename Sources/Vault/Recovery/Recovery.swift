import Slots

extension Vault {
    /// The recovery code's status: where it is, and whether the person marked this very code as copied.
    public struct RecoveryStatus: Sendable {
        public let location: LocationStatus
        /// nil when it could not be checked (the code could not be read without prompting).
        public let copied: Bool?
    }

    /// Stores a new random recovery code in place of any old one. The code is not shown.
    public func generateRecoveryCode(mode: SlotMode) throws(VaultError) -> StoreOutcome {
        let code = RecoveryCode.generate()
        return try store(RecoveryCode.slot, code, mode: mode)
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
