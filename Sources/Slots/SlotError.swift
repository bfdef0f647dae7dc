/// What can go wrong in a slot backend. Messages name what happened and what to do; they never hold secret bytes.
public enum SlotError: Error, Equatable, Sendable {
    /// The slot holds no value.
    case empty(SlotName)
    /// The secret is empty or longer than `SecretBytes.maximumCount`.
    case badSecretSize(Int)
    /// A sealed file was made on another machine.
    case foreignMachine(path: String)
    /// A sealed file belongs to another slot (it was renamed or copied).
    case wrongSlot(path: String, belongsTo: String)
    /// A sealed file or the device key fails to parse or authenticate.
    case tampered(path: String, detail: String)
    /// A file or folder is readable or writable by others, owned by someone else, or a symlink.
    case unsafePermissions(path: String, detail: String)
    /// The Secret Service cannot be asked: no bus, no provider, no default collection, a timeout, an error.
    case serviceUnavailable(String)
    /// The collection holding the item (or receiving it) is locked and nobody unlocked it.
    case locked(String)
    /// The provider asked for confirmation in a prompt that nobody answered, or that was dismissed.
    case promptUnanswered(String)
    /// The device key is sealed by a TPM that cannot be reached now (none configured, not answering).
    case tpmUnavailable(path: String, detail: String)
    /// A new device key could not be sealed by the configured TPM.
    case tpmCannotSeal(detail: String)
    /// `device-key seal` was asked for, but no TPM is configured or present to seal with.
    case noTPMToSeal(detail: String)
    /// `device-key seal` of a protected vault, and vaultctl-gate has no TPM: root chooses it (gate.conf, and
    /// the TPM helper's access to it); the user's environment does not.
    case gateHasNoTPM
    /// The device key was sealed by another TPM (a copied state folder, or this TPM was cleared).
    case tpmForeign(path: String)
    /// The TPM is in dictionary-attack lockout; the seconds to wait when it said.
    case tpmLockout(seconds: UInt32?)
    /// The `vaultctl-tpm` helper, which alone talks to the TPM, is not at `path` (beside vaultctl).
    case tpmHelperMissing(path: String)
    /// The device slot of a protected vault is behind `vaultctl-gate`, which could not be used or refused
    /// in words that are not a slot's (the vault locked, the audit log, a misinstalled gate).
    case gateUnavailable(String)
    /// The mode record names the fleet for a value, and no fleet is configured here (`path`, the fleet's
    /// configuration, does not exist): the fleet cannot be asked, so no other slot's copy stands in for it.
    case fleetNotConfigured(path: String)
    /// An operating-system call failed.
    case io(path: String, errno: Int32, operation: String)
}

extension SlotError {
    /// A value the provider holds locked: in a locked collection, or behind an access the provider asks the
    /// person to confirm (KeePassXC's "confirm access"). vaultctl cannot tell which.
    public static func lockedValue(_ what: String) -> SlotError {
        .locked("\(what) is locked in the Secret Service (a locked collection, or an access the provider asks you to confirm, as KeePassXC does); unlock it or allow vaultctl in the provider first (read, move and delete, run from your desktop session, ask the provider themselves after your password)")
    }
}
