/// Whether a slot holds a value, as far as the backend could look.
public enum Holding: Equatable, Sendable {
    /// A value is there. `locked`: it sits in a locked collection, so it counts as held but cannot be read now.
    case holds(locked: Bool)
    case empty
    /// The backend could not be asked; the error says why. Never read as "empty".
    case unknown(SlotError)
}

/// One backend's view of slots: where a secret lives.
///
/// Implementations: `SealedFileSlot` (device) and `SecretServiceSlot` (sync). Fakes in tests force failures.
public protocol Slot: Sendable {
    var mode: SlotMode { get }
    /// Looks without reading the secret and without prompting.
    func holding(_ name: SlotName) -> Holding
    /// Reads the value; throws `SlotError.empty` when there is none.
    func read(_ name: SlotName) throws(SlotError) -> SecretBytes
    /// Writes the value, replacing any old one, so that a crash leaves either the old or the new value.
    func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError)
    /// Removes the value; returns false when there was none.
    @discardableResult
    func delete(_ name: SlotName) throws(SlotError) -> Bool
    /// The names this backend holds (never their values).
    func names() throws(SlotError) -> [SlotName]
    /// Where a held value is, in words a person recognizes; see the default below.
    func place(of name: SlotName) -> String?
    /// What binds a held value's key to this machine (the device slot: `tpm2` or `machine-id`); nil for
    /// backends without such a key, or when the slot holds no value.
    func binding(of name: SlotName) -> String?
}

extension Slot {
    /// Where a held value is, in words a person recognizes (for the sync slot, the collection's label);
    /// nil when the backend has nothing better to say than its mode.
    public func place(of name: SlotName) -> String? { nil }

    public func binding(of name: SlotName) -> String? { nil }
}
