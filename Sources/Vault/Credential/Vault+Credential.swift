import Slots

extension Vault {
    /// Whether slot `name` holds exactly `candidate`, compared in constant time inside this process; the
    /// stored value is never returned. Not gated: it answers only "this one?" for a value the caller
    /// already has (git's `erase` names the password that failed), which tells a same-user process nothing
    /// it could not read from the device files or an unlocked collection itself. nil when the slot is empty.
    public func holds(_ name: SlotName, exactly candidate: SecretBytes) throws(VaultError) -> Bool? {
        try steadily { () throws(VaultError) -> Bool? in try holdsLocked(name, exactly: candidate) }
    }

    private func holdsLocked(_ name: SlotName, exactly candidate: SecretBytes) throws(VaultError) -> Bool? {
        let mode: SlotMode
        switch try loadMode(name) {
        case .none: return nil
        case .mode(let m, _): mode = m
        case .unknown(let error):
            switch error {
            case .serviceUnavailable, .locked: throw .couldNotLook(name, error)
            default: throw .slot(error)
            }
        }
        let stored: SecretBytes
        do { stored = try slot(mode).read(name) } catch {
            if case .empty = error { return nil }
            throw .slot(error)
        }
        return stored.constantTimeEquals(candidate)
    }
}
