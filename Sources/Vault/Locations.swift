import GateProtocol
import VaultRules

#if canImport(Glibc)
import Glibc
#endif

/// Where vaultctl keeps its files, from the XDG base directory variables.
///
/// - state (device slot files, device key): `$XDG_STATE_HOME/vaultctl`, default `~/.local/state/vaultctl`.
///   It stays on this machine.
/// - config (the mode record): `$XDG_CONFIG_HOME/vaultctl`, default `~/.config/vaultctl`. It may travel with
///   the user's config, like preferences restored from a backup.
public struct Locations: Sendable {
    public let state: String
    public let config: String

    public init(state: String, config: String) {
        self.state = state
        self.config = config
    }

    /// Reads the XDG variables (relative values are ignored, as the spec says) and `HOME`.
    public static func fromEnvironment() -> Locations {
        let home = env("HOME") ?? homeFromPasswd() ?? "/"
        let state = env("XDG_STATE_HOME").flatMap(absolute) ?? "\(home)/.local/state"
        let config = env("XDG_CONFIG_HOME").flatMap(absolute) ?? "\(home)/.config"
        return Locations(state: "\(state)/vaultctl", config: "\(config)/vaultctl")
    }

    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    private static func absolute(_ path: String) -> String? { path.hasPrefix("/") ? path : nil }

    private static func homeFromPasswd() -> String? {
        guard let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir else { return nil }
        return String(cString: dir)
    }
}
