#if canImport(Glibc)
import Glibc
#endif

/// The words a person reads for a `SlotError`: what happened and what to do, one line, no secret bytes.
public enum SlotErrorText {
    public static func describe(_ error: SlotError) -> String { describe(error, installation: .current) }

    /// `installation`: whose remedies to name (a test gives another than this process's).
    public static func describe(_ error: SlotError, installation: Installation) -> String {
        switch error {
        case .empty(let name):
            return "Slot '\(name)' is empty; store a value with 'vaultctl store \(name)'."
        case .badSecretSize(let n):
            return n == 0
                ? "The secret is empty; give 1 to \(SecretBytes.maximumCount) bytes."
                : "The secret is larger than \(SecretBytes.maximumCount) bytes; vaultctl keeps small secrets only."
        case .foreignMachine(let path) where path.hasSuffix("/device.key"):
            let folder = String(path.dropLast("/device.key".count))
            return "\(path) was made on another machine (a copied or restored state folder, or a changed machine-id), so nothing sealed under it opens here. Move \(folder) aside to start afresh on this machine."
        case .foreignMachine(let path):
            return "\(path) was sealed on another machine and cannot open here; store the secret again on this machine."
        case .wrongSlot(let path, let owner):
            return "\(path) does not belong to this slot (it was sealed for '\(owner)'); rename it back or store the secret again."
        case .tampered(let path, let detail):
            return "\(path) cannot be opened: \(detail)."
        case .unsafePermissions(let path, let detail):
            return "Refusing \(path): \(detail)."
        case .serviceUnavailable(let why):
            return "The Secret Service is unavailable: \(why). Check that your keyring (gnome-keyring, KeePassXC, …) runs on the session bus."
        case .locked(let why):
            return "The keyring is locked: \(why)."
        case .promptUnanswered(let why):
            return "The Secret Service asked for confirmation and got none: \(why)."
        case .tpmUnavailable(let path, let detail):
            return "The TPM that sealed this key is not available (\(path)): \(detail). Start or attach that TPM (or set \(TPMChoice.variable)) and try again; nothing was changed.\(installation.tpmPackageAdvice().map { " \($0)" } ?? "")"
        case .noTPMToSeal(let detail):
            return "There is no TPM to seal the device key with: \(detail). Attach one, or set \(TPMChoice.variable) to the TPM to use, and try again; nothing was changed.\(installation.tpmPackageAdvice().map { " \($0)" } ?? "")"
        case .gateHasNoTPM:
            return "The gate, vaultctl-gate, has no TPM to seal the device key with: it uses only the TPM root names in /etc/vaultctl/gate.conf, never \(TPMChoice.variable), and \(installation.gateTPMAccess); nothing was changed."
        case .tpmCannotSeal(let detail):
            return "The TPM could not seal a new device key: \(detail). Start or attach it, or set \(TPMChoice.variable)=none to bind the key to the machine id instead; nothing was changed."
        case .tpmForeign(let path):
            return "\(path) was sealed to another TPM (a copied state folder, or this TPM was cleared), so it cannot be unsealed here; nothing was changed."
        case .tpmLockout(let seconds):
            let wait = seconds.map { "try again in \($0) s" } ?? "try again later"
            return "The TPM is in dictionary-attack lockout after too many failed authorizations; \(wait) (its owner can clear it with tpm2_dictionarylockout --clear-lockout)."
        case .tpmHelperMissing(let path):
            return "The TPM helper vaultctl-tpm is missing: it was looked for at \(path), beside vaultctl, and without it no key sealed by the TPM can be made or opened. \(installation.helperRemedy); nothing was changed."
        case .gateUnavailable(let why):
            return "The device slot is behind vaultctl-gate, which cannot be used: \(why)."
        case .fleetNotConfigured(let path):
            // A fleet.json that is there was written by a vaultctl that has the fleet (this one is older).
            let why = access(path, F_OK) == 0 ? "this vaultctl does not use \(path)" : "\(path) does not exist"
            return "The mode record says this value is in the fleet, but no fleet is configured on this machine (\(why)), so it cannot be asked and no copy in another slot is used in its place; configure the fleet here, or store the value again."
        case .io(let path, let e, let op):
            return "Failed to \(op) \(path): \(String(cString: strerror(e)))."
        }
    }
}

extension SlotErrorText {
    /// Text from another program (a provider's error, a collection's label) made safe for one line on a
    /// terminal: control characters (C0, DEL, C1 such as CSI), line and paragraph separators and format
    /// characters become spaces; at most `limit` characters.
    public static func oneLine(_ text: String, limit: Int = 300) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            let v = scalar.value
            let category = scalar.properties.generalCategory
            let unsafe = v < 0x20 || (0x7f...0x9f).contains(v) || category == .lineSeparator
                || category == .paragraphSeparator || category == .format
            out.append(unsafe ? " " : scalar)
        }
        return String(out)
    }
}

extension SlotError: CustomStringConvertible {
    public var description: String { SlotErrorText.describe(self) }
}
