/// Which backend a slot lives in.
public enum SlotMode: String, Sendable, CaseIterable {
    /// An item in the Secret Service default collection; a provider may carry it to other devices.
    case sync
    /// A file sealed under a key bound to this machine; it never opens anywhere else.
    case device
    /// A secret in an OpenBao KV v2 mount shared by several machines (issue 35). No backend for it exists
    /// yet: a record that names it is "unknown" (`SlotError.fleetNotConfigured`), never another slot's copy.
    case fleet
}

extension SlotMode {
    /// The modes a person may give (`--mode`, `--to`), in the order help names them. The fleet is not one
    /// of them until vaultctl can store a value there.
    public static let offered: [SlotMode] = [.device, .sync]

    /// Seconds one operation of the sync slot (a Secret Service call) may take before it counts as
    /// unavailable: `SecretServiceSlot`'s default, and what the vault's change lock waits are made of. Here,
    /// below both, so the vault (and the gate, which links it) need not depend on the Secret Service for it.
    public static let syncOperationSeconds: Double = 5
}
