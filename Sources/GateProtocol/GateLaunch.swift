import CSystem

/// How vaultctl starts `vaultctl-gate`, as the gate's start-up checks it (CSystem's gate_start.h, which
/// vaultctl's constructor and `GateClient` start the gate with).
public enum GateLaunch {
    /// The PATH the gate sets for itself, and the only variables it keeps (as polkit's helper keeps them:
    /// the language of PAM's messages).
    public static let gatePATH = VAULTCTL_GATE_PATH_VARIABLE
    public static let gateVariables = VAULTCTL_GATE_KEPT_VARIABLES.utf8.split(separator: UInt8(ascii: " "))
        .map { String(decoding: $0, as: UTF8.self) }  // by bytes: a split by Character loads grapheme breaking

    /// The gate's one argument: a hint that the command may authenticate (see `GateClient.startEarly`). It
    /// changes only when the gate does what such a request needs, never what it does.
    public static let authenticatingHint = VAULTCTL_GATE_AUTHENTICATING_HINT
}
