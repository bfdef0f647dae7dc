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
    /// Looks as `holding` does, for a `read` of `name` that follows (after the presence gate): a backend may
    /// also make ready what that read will need, without touching the value. See the default below.
    func holdingBeforeRead(_ name: SlotName) -> Holding
    /// Reads the value; throws `SlotError.empty` when there is none.
    func read(_ name: SlotName) throws(SlotError) -> SecretBytes
    /// Writes the value, replacing any old one, so that a crash leaves either the old or the new value.
    func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError)
    /// Removes the value; returns false when there was none.
    @discardableResult
    func delete(_ name: SlotName) throws(SlotError) -> Bool
    /// The names this backend holds (never their values).
    func names() throws(SlotError) -> [SlotName]
    /// The names with what a person should know about the listing (values passed over, places that may
    /// hide some); see the default below.
    func listing() throws(SlotError) -> SlotListing
    /// Where a held value is, in words a person recognizes; see the default below.
    func place(of name: SlotName) -> String?
    /// Who answers for this backend now, in words a person recognizes (the sync slot: the provider's program
    /// and the collection new values go to); see the default below.
    func provider() -> String?
    /// Whether `read` can get a locked value unlocked by asking a person (the provider's prompt on a
    /// desktop); see the default below.
    var canAskToUnlock: Bool { get }
    /// The error for a value of this backend held locked (`what`: "slot 'x'", "the recovery code"), in the
    /// words of the provider answering now; see the default below.
    func lockedValue(_ what: String) -> SlotError
    /// Asks the provider to unlock the locked copies of `name` now (its prompt, a person's answer), so a
    /// change made next needs none: run after PAM and before the change lock, as no wait for a person may
    /// hold that lock. See the default below.
    func unlockBeforeChange(_ name: SlotName) throws(SlotError)
    /// What binds a held value's key to this machine (the device slot: `tpm2` or `machine-id`); nil for
    /// backends without such a key, or when the slot holds no value.
    func binding(of name: SlotName) -> String?
    /// Public bytes that name the stored form of a held value, read without any key (so no decryption and
    /// no TPM): they change whenever the value is written again. nil when the backend has none or holds no
    /// value; see the default below.
    func storedTag(of name: SlotName) -> [UInt8]?
}

extension Slot {
    /// Where a held value is, in words a person recognizes (for the sync slot, the collection's label);
    /// nil when the backend has nothing better to say than its mode.
    public func place(of name: SlotName) -> String? { nil }

    /// A backend that has no provider to name (the device slot) names none.
    public func provider() -> String? { nil }

    /// A backend with nothing to make ready looks as for any other question.
    public func holdingBeforeRead(_ name: SlotName) -> Holding { holding(name) }

    /// A backend whose names are always valid and that hides nothing: its names alone.
    public func listing() throws(SlotError) -> SlotListing { SlotListing(names: try names()) }

    /// A backend that has no locked values, or no way to ask for them, cannot.
    public var canAskToUnlock: Bool { false }
    /// A backend that cannot say more says what may have locked it.
    public func lockedValue(_ what: String) -> SlotError { .lockedValue(what) }
    public func unlockBeforeChange(_ name: SlotName) throws(SlotError) {}
    public func binding(of name: SlotName) -> String? { nil }
    public func storedTag(of name: SlotName) -> [UInt8]? { nil }
}

/// What a backend listed: its names, and what a person should know about how complete that is.
public struct SlotListing: Sendable, Equatable {
    public var names: [SlotName]
    /// Values passed over because their name is not a valid slot name (another program may store anything
    /// under vaultctl's attributes).
    public var skipped: Int = 0
    /// Places that were locked while listing, by their labels: a provider may hide a locked collection's
    /// items (KeePassXC does; gnome-keyring lists them), so names there may be missing.
    public var lockedPlaces: [String] = []

    public init(names: [SlotName], skipped: Int = 0, lockedPlaces: [String] = []) {
        self.names = names
        self.skipped = skipped
        self.lockedPlaces = lockedPlaces
    }
}
