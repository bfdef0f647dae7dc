#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Which boundary guards this user's device slot, as the CLI found it: `vaultctl-gate` (the protected
/// store, which no program running as the user can reach), or none (the user's own state folder, which
/// any such program can read), with why an installed gate is not in effect.
public enum Protection: Sendable {
    /// The device slot, rate limit, vault lock and the gate's audit log are behind `vaultctl-gate`.
    case gate(GateClient)
    /// The device slot is in the user's state folder. `notInEffect`: a gate is installed, and why it does
    /// not guard this vault; nil when none is installed. `gate`: the installed gate, started (for
    /// `device-key protect`, which moves the vault behind it).
    case none(notInEffect: String?, gate: GateClient? = nil)

    /// `status --json`'s `boundary`: "gate", "none", or "not-in-effect".
    public var word: String {
        switch self {
        case .gate: return "gate"
        case .none(nil, _): return "none"
        case .none: return "not-in-effect"
        }
    }

    /// One sentence for `status` and `device-key status`.
    public var sentence: String {
        switch self {
        case .gate:
            return "The device slot is behind vaultctl-gate: no program running as you can read it without your authentication, nor reset the rate limit, remove the vault lock or rewrite the gate's audit log."
        case .none(nil, _):
            return "No boundary holds the device slot: any program running as you can read the device key in your state folder. To close that, \(Installation.current.installGate)."
        case .none(let why?, _):
            return "vaultctl-gate is installed but not in effect for this vault (\(why)): any program running as you can read the device key in your state folder."
        }
    }

    /// The marker a protected vault leaves in the state folder, so that a gate that went missing or stopped
    /// working is an error (69), never a quiet return to files in the state folder.
    public static let markerName = "protected-by-gate"

    /// Decides for the state folder `state`: a gate installed beside vaultctl that starts, for a vault that
    /// is protected already or is new; a vault from before the gate stays in the state folder until it is
    /// moved; no gate beside vaultctl: none. Throws (69) when an installed gate refuses to run, and when the
    /// vault was protected and the gate is missing.
    /// `started`: the installed gate's client, started early by the command (`GateClient.startEarly`).
    /// `helloAtFirstRequest`: for a command that sends its first request at once (`status`). When the vault
    /// was protected before (its marker) and has no device key of its own in the state folder, the answer is
    /// the gate whatever the hello says, so the hello is not waited for here but by the first request (which
    /// still sends nothing before it, and believes only a gate that passed `GateIdentity`), and the command's
    /// other work (the Secret Service's look) overlaps the gate's start-up. Such a command confirms the gate
    /// (`GateClient.start`) before it uses any answer, so that a gate that cannot run is its error (69) as here.
    public static func find(state: String, source: PasswordSource, promptSeconds: @escaping () -> Double, started: GateClient? = nil,
                            gatePath: String? = GateClient.installedPath(), helloAtFirstRequest: Bool = false) throws(VaultError) -> Protection {
        let marker = "\(state)/\(markerName)"
        let protectedBefore = access(marker, F_OK) == 0
        // A vault made before the gate, in the state folder: it stays there until it is moved in.
        let userSideVault = access("\(state)/device.key", F_OK) == 0 || access("\(state)/device.tpm2", F_OK) == 0
        guard let gatePath else {
            if protectedBefore {
                throw .slot(.gateUnavailable("this vault is protected, and vaultctl-gate is missing beside vaultctl (../libexec/vaultctl/vaultctl-gate); \(Installation.current.reinstall)"))
            }
            return .none(notInEffect: nil)
        }
        let client = started.flatMap { $0.path == gatePath ? $0 : nil } ?? GateClient(path: gatePath, source: source, promptSeconds: promptSeconds)
        if helloAtFirstRequest && protectedBefore && !userSideVault { return .gate(client) }
        // An installed gate that cannot run is an error (69, its reason), whatever the state folder holds:
        // its files are the user's, so a program running as the user could make them say "from before".
        let protected = try client.start()
        if !protected && userSideVault {
            return .none(notInEffect: "this vault's device key is in your state folder, from before the gate; 'vaultctl device-key protect' moves it behind the gate", gate: client)
        }
        if !protectedBefore {
            do {
                try SecureFile.ensurePrivateFolder(state)
                try SecureFile.write(marker, Array("This vault's device slot is behind vaultctl-gate (/var/lib/vaultctl).\n".utf8))
            } catch { throw .slot(error) }
        }
        return .gate(client)
    }
}
