import Slots

/// What the vault layer reports. The CLI turns each into one stderr line and a sysexits code in one place.
public enum VaultError: Error, Sendable {
    /// A slot backend failed; its own words say why.
    case slot(SlotError)
    /// The slot is not in the device slot and the sync slot could not be asked: we could not look.
    case couldNotLook(SlotName, SlotError)
    /// The presence check failed: wrong password, refused account, or no way to ask.
    case authenticationFailed(String)
    /// PAM itself is misconfigured or broken (not a wrong password).
    case authenticationUnavailable(String)
    /// A configuration file is unreadable or invalid.
    case configuration(path: String, detail: String)
    /// The input is not usable (secrets that do not match when typed twice, …).
    case badInput(String)
}
