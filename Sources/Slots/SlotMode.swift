/// Which backend a slot lives in.
public enum SlotMode: String, Sendable, CaseIterable {
    /// An item in the Secret Service default collection; a provider may carry it to other devices.
    case sync
    /// A file sealed under a key bound to this machine; it never opens anywhere else.
    case device
}
