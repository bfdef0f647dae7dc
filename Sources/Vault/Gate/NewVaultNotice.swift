#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Synchronization

/// What a person is told when a device-slot value makes a new vault in their state folder, with no
/// vaultctl-gate beside the running vaultctl: that its device key is readable by every program running as
/// them, and, when a gate is installed elsewhere on this machine (the package's, `make install`'s default, or
/// a store in /var/lib/vaultctl), which one. Said once, after the write that made the vault (`expect` before
/// the write, `said` at the command's end); from then on `status` says it.
public enum NewVaultNotice {
    /// Where installed gates live: the package's, then `make install`'s default prefix.
    public static let gatePlaces = [Installation.packageGate, Installation(.makeInstall(prefix: "/usr/local")).gatePlace]
    /// The protected stores' folder, made by every gate install.
    public static let storePlace = "/var/lib/vaultctl"

    /// The state folder a write may make a vault in (set before the write when it holds no device key).
    static let pending = Mutex<String?>(nil)

    /// Before a device-slot write to the state folder `state`: remembers it when no vault is there yet.
    public static func expect(state: String, exists: (String) -> Bool = { access($0, F_OK) == 0 }) {
        guard !hasDeviceKey(state, exists) else { return }
        pending.withLock { $0 = state }
    }

    /// At the command's end: the sentence when a write this process began made the vault (its device key is
    /// there now); nil otherwise (nothing written, or the write failed before the key was made).
    public static func said(exists: @escaping (String) -> Bool = { access($0, F_OK) == 0 }) -> String? {
        guard let state = pending.withLock({ s -> String? in defer { s = nil }; return s }),
              hasDeviceKey(state, exists) else { return nil }
        return sentence(state: state, exists: exists)
    }

    static func hasDeviceKey(_ state: String, _ exists: (String) -> Bool) -> Bool {
        exists("\(state)/device.key") || exists("\(state)/device.tpm2")
    }

    /// The sentence for a new vault in `state`. `exists`: whether a path exists (a test sets it).
    public static func sentence(state: String, exists: (String) -> Bool = { access($0, F_OK) == 0 }) -> String {
        let start = "this made a new vault in \(state), whose device key any program running as you can read"
        if let gate = gatePlaces.first(where: exists) {
            return "\(start): this vaultctl has no vaultctl-gate beside it (../libexec/vaultctl/), though one is installed at \(gate). To keep new vaults behind that gate, run the vaultctl installed with it (\(installedCommand(gate))) instead; 'vaultctl device-key protect' moves this one there."
        }
        if exists(storePlace) {
            return "\(start): this vaultctl has no vaultctl-gate beside it (../libexec/vaultctl/), though \(storePlace) shows a gate was installed here. Run the vaultctl installed with the gate instead; 'vaultctl device-key protect' moves this vault behind it."
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
