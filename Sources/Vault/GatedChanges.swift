import GateProtocol
import Slots
import VaultRules

/// The fresh authentication in front of changes that cannot be undone: a `delete` of a value, a `store`
/// over one, a new recovery code over one.
///
/// Each looks first (holding the change lock shared, never across the prompt), asks PAM through the same
/// rate-limited gate reads use only when something would be lost, then the change itself runs. A first
/// store asks nothing; the change lock then makes sure it still replaces nothing (`expectingEmpty`).
extension Vault {
    /// Whether a store of `name` would replace something: a value in a slot, copies the record cannot
    /// tell apart, or a slot that could not be asked where the record says (or, unreadable, may say) a
    /// value is, or the device slot's own error says a file is.
    /// A record that names the other slot counts too: pointing it at `mode` changes which copy is the value
    /// (a copy there that this process could not see, through a state folder or a bus of another's choosing).
    static func replaces(_ held: LoadMode, recorded: ModeRecord.Lookup, storing mode: SlotMode) -> Bool {
        if case .recorded(let named) = recorded, named != mode { return true }
        switch held {
        case .mode, .conflicting: return true
        case .none: return false
        case .unknown(let error):
            switch error {
            case .serviceUnavailable, .locked:
                switch recorded {
                case .recorded(let mode): return mode == .sync
                case .unreadable: return true
                case .absent: return false
                }
            default: return true  // a device file that cannot be looked at or opened here
            }
        }
    }

    /// Before `store` into `mode`: asks PAM when the store would replace a value and the policy gates that
    /// (`gate.storeOver`, or `always`). Returns whether the slot was empty (pass it to `store` as
    /// `expectingEmpty`).
    public func confirmStore(_ name: SlotName, mode: SlotMode, always: Bool = false) throws(VaultError) -> Bool {
        let (held, recorded) = try steadily { () throws(VaultError) in (try loadMode(name), try record.lookup(name)) }
        guard Self.replaces(held, recorded: recorded, storing: mode) else { return true }
        // A value the provider keeps locked is replaced (or, storing into the device slot, removed) only once
        // the provider unlocks it: refused before the password prompt where nobody could answer its dialog.
        let lockedInSync: Bool
        if case .mode(.sync, locked: true) = held { lockedInSync = true } else { lockedInSync = false }
        if lockedInSync && !sync.canAskToUnlock { throw .slot(sync.lockedValue("slot '\(name)'")) }
        var gated = always
        if !gated { gated = try changeGates().storeOver }
        if gated {
            try gate.verify(reason: PromptReason.replace(name).text, slots: [name])
        }
        // Its dialog now, after PAM: no wait for a person holds the change lock.
        if lockedInSync {
            do { try sync.unlockBeforeChange(name) } catch { throw .slot(error) }
        }
        return false
    }

    /// Before `delete`: nothing there asks nothing (the delete then tidies the record and says `empty`, 66);
    /// a value in a locked collection is refused before the prompt; otherwise PAM when the policy gates
    /// deletes (`gate.delete`). Returns whether it let the delete through without asking because the slot
    /// was empty (pass it to `delete` as `expectingEmpty`).
    public func confirmDelete(_ name: SlotName) throws(VaultError) -> Bool {
        let held = try steadily { () throws(VaultError) in try loadMode(name) }
        switch held {
        // An entry naming the sync slot, which the Secret Service running now does not hold (another
        // keyring's value, issue 36), is removed as a delete is asked for (`deleteLocked`): without that
        // entry a copy this process cannot see may be read in its place, so nothing unasked removes it.
        case .none: guard try record.lookup(name) == .recorded(.sync) else { return true }
        // A provider that asks a person to allow access (KeePassXC) can ask after PAM, on a desktop.
        case .mode(.sync, locked: true) where !sync.canAskToUnlock: throw .slot(sync.lockedValue("slot '\(name)'"))
        // The Secret Service could not be asked, and the device slot holds nothing: the delete could remove
        // nothing (it would say so after the password), so it is refused before the prompt, as a read is.
        case .unknown(let error) where device.holding(name) == .empty:
            switch error {
            case .serviceUnavailable, .locked: throw .couldNotLook(name, error)
            default: break
            }
        case .mode, .unknown, .conflicting: break
        }
        if try changeGates().delete {
            try gate.verify(reason: PromptReason.delete(name).text, slots: [name])
        }
        return false
    }
}
