#if canImport(Glibc)
import Glibc
#endif

/// What a person is told when a device-slot value is about to make a new vault in their state folder, with
/// no vaultctl-gate beside the running vaultctl: that its device key will be readable by every program
/// running as them, and, when a gate is installed elsewhere on this machine (another vaultctl's, or a store
/// in /var/lib/vaultctl), which one. Said once, at the vault's creation; from then on `status` says it.
public enum NewVaultNotice {
    /// Where installed gates live (the package's, then `make install`'s default prefix).
    public static let gatePlaces = ["/usr/libexec/vaultctl/vaultctl-gate", "/usr/local/libexec/vaultctl/vaultctl-gate"]
    /// The protected stores' folder, made by every gate install.
    public static let storePlace = "/var/lib/vaultctl"

    /// The sentence for a state folder `state` that holds no device key yet; nil when it holds one (the
    /// vault exists, and was made with its own notice or before this one existed).
    /// `exists`: whether a path exists (a test sets it).
    public static func sentence(state: String, exists: (String) -> Bool = { access($0, F_OK) == 0 }) -> String? {
        guard !exists("\(state)/device.key"), !exists("\(state)/device.tpm2") else { return nil }
        let start = "this makes a new vault in \(state), whose device key any program running as you can read"
        if let gate = gatePlaces.first(where: exists) {
            return "\(start): this vaultctl has no vaultctl-gate beside it (../libexec/vaultctl/), though one is installed at \(gate). To keep the vault behind that gate, run the vaultctl installed with it (\(installedCommand(gate))) instead; 'vaultctl device-key protect' moves this one there later."
        }
        if exists(storePlace) {
            return "\(start): this vaultctl has no vaultctl-gate beside it (../libexec/vaultctl/), though \(storePlace) shows a gate was installed here. Run the vaultctl installed with the gate instead; 'vaultctl device-key protect' moves this vault behind it later."
        }
        return "\(start) (no vaultctl-gate is installed). 'vaultctl status NAME' says so for each secret."
    }

    /// The vaultctl installed with the gate at `gate` (PREFIX/libexec/vaultctl/vaultctl-gate → PREFIX/bin/vaultctl).
    static func installedCommand(_ gate: String) -> String {
        let suffix = "/libexec/vaultctl/vaultctl-gate"
        guard gate.hasSuffix(suffix) else { return "vaultctl" }
        return String(gate.dropLast(suffix.count)) + "/bin/vaultctl"
    }
}
