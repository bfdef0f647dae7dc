import Slots

/// The sync slot: an item in a Secret Service collection (new values go to the default one), found in any
/// collection by the attributes
/// `xdg:schema` = `org.vaultctl.Slot` and `slot` = the slot name (the same attributes
/// `secret-tool store --label=L xdg:schema org.vaultctl.Slot slot NAME` writes).
///
/// It talks to the provider through sd-bus (`SecretServiceClient`, `BusConnection`) instead of through
/// libsecret, whose GLib/GDBus stack costs every command about 10 ms. Secrets cross the bus encrypted with
/// the session algorithm libsecret uses, on libgcrypt as libsecret does (`SessionKeyExchange`). Every operation has
/// `timeout` seconds, end to end; past that it is `serviceUnavailable`, never a hang. Status and list never
/// unlock anything and never run a prompt. A provider's prompt (KeePassXC asks one for every new item, and
/// its access dialog for a locked item; gnome-keyring asks for a locked collection's password) is run the
/// Secret Service way for store, read and delete, bounded (`SecretServiceClient.runPrompt`).
public struct SecretServiceSlot: Slot {
    public static let schemaName = "org.vaultctl.Slot"
    public static let attribute = "slot"
    public let mode = SlotMode.sync
    /// Seconds one Secret Service operation may take before it counts as unavailable.
    public static let defaultTimeout: Double = SlotMode.syncOperationSeconds
    let timeout: Double

    public init(timeout: Double = SecretServiceSlot.defaultTimeout) {
        self.timeout = timeout
    }

    /// Where the words go that tell a person to answer a provider's prompt (before vaultctl waits for it).
    /// Call once at start-up.
    public static func tellAboutPrompts(_ notice: @escaping (String) -> Void) {
        SecretServiceClient.promptNotice = notice
    }

    /// The label vaultctl gives the items it writes.
    public static func label(for name: SlotName) -> String { "vaultctl: \(name.rawValue)" }

    private func run<T>(_ what: String, changes: Bool = false,
                        _ body: (SecretServiceClient) throws(SecretServiceClient.Failure) -> T) throws(SlotError) -> T {
        try SecretServiceClient.shared(timeout: timeout, what, changes: changes, body)
    }

    /// Connects to the session bus on a thread of its own (loading sd-bus, the connection, its Hello, and
    /// the provider's `Peer.Ping`, which a bus may answer by starting the provider on demand, as the first
    /// look would), so that the first look finds it made: for a command that always asks the Secret Service
    /// and meanwhile waits for something else (vaultctl-gate's start). It runs even when the command then
    /// fails before its look (the gate refuses, say). The connection is the one every operation of this
    /// process shares, behind its lock; an operation's bound counts from its call, the wait for that lock
    /// included, so a look made meanwhile takes no longer in all than before. Nothing is looked at or
    /// changed here; a connection that fails is reported by the first operation, in its own words. Nothing
    /// happens when no thread can be made.
    public static func connectAhead(timeout: Double = SecretServiceSlot.defaultTimeout) {
        BackgroundThread.start {
            _ = try? SecretServiceClient.shared(timeout: timeout, "connecting to the session bus", changes: false) { (_) throws(SecretServiceClient.Failure) in }
        }
    }

    public func holding(_ name: SlotName) -> Holding {
        look(name) { (c) throws(SecretServiceClient.Failure) in try c.newest(c.items(slot: name)) }
    }

    /// As `holding`, with the encrypted session opened in the same trip and the item kept for the read that
    /// follows the presence gate (`SecretServiceClient.itemBeforeRead`).
    public func holdingBeforeRead(_ name: SlotName) -> Holding {
        look(name) { (c) throws(SecretServiceClient.Failure) in try c.itemBeforeRead(slot: name) }
    }

    /// What `find` says of `name`'s item (the one reads use): held (an item in a locked collection counts
    /// as held), empty, or unknown when the provider could not be asked.
    private func look(_ name: SlotName,
                      _ find: (SecretServiceClient) throws(SecretServiceClient.Failure) -> SecretServiceClient.Item?) -> Holding {
        do {
            return try run("looking for slot '\(name)'") { (c) throws(SecretServiceClient.Failure) -> Holding in
                guard let item = try find(c) else { return .empty }
                return .holds(locked: item.locked)
            }
        } catch {
            return .unknown(error)
        }
    }

    /// The label of the collection holding the item, and the item's own label.
    public func place(of name: SlotName) -> String? {
        try? run("describing slot '\(name)'") { (c) throws(SecretServiceClient.Failure) -> String? in
            let items = try c.recentItems(slot: name)
            guard let item = try c.newest(items) else { return nil }
            let (collection, label) = try c.labels(item: item.path)
            // Labels are anyone's words (any program in the session may set them): one line, no controls.
            let shownLabel = SlotErrorText.oneLine(label ?? SecretServiceSlot.label(for: name), limit: 100)
            let place = collection.map { "the Secret Service collection '\(SlotErrorText.oneLine($0, limit: 100))'" }
                ?? "a Secret Service collection"
            let copies = items.count > 1 ? " (the newest of \(items.count) items for this slot; reads use it)" : ""
            return "\(place) as item '\(shownLabel)'\(copies)"
        }
    }

    /// The provider answering now: its program and the collection new values go to ("KeePassXC,
    /// 'Passwords'"); nil when it cannot be asked. Never unlocks or prompts.
    public func provider() -> String? {
        (try? run("describing the Secret Service provider") { (c) throws(SecretServiceClient.Failure) -> String? in
            c.providerDescription()
        }) ?? nil
    }

    /// A locked value in the words of the provider answering now (one more look at the bus, on the error's
    /// path only): KeePassXC's per-access confirmation is named with the setting that ends it; another
    /// provider's is a locked collection, and how gnome-keyring opens one without a desktop.
    public func lockedValue(_ what: String) -> SlotError {
        let seen = try? run("describing the Secret Service provider") { (c) throws(SecretServiceClient.Failure) -> (Provider?, String?) in
            (c.provider, c.providerDescription())
        }
        guard let (provider, description) = seen, let provider else { return .lockedValue(what) }
        let shown = description ?? provider.programName
        if provider.confirmsEachAccess {
            return .locked("\(what) is locked in the Secret Service (\(shown)): its database is locked, or \(provider.programName) asks you to allow each access (\"Confirm when passwords are retrieved by clients\", on by default; its \"Remember\" lasts one vaultctl command); open the database, or run this from your desktop session and allow it there, or turn that setting off (docs/manual.md, \"Providers tested\")")
        }
        return .locked("\(what) is in a locked collection of the Secret Service (\(shown)); unlock it and try again (gnome-keyring unlocks at your desktop login, and without one by 'gnome-keyring-daemon --replace --unlock --components=secrets' with the password on its standard input: the README's \"Without a desktop\")")
    }

    /// A locked item can be unlocked by the provider's prompt only where a person can see it.
    public var canAskToUnlock: Bool { SecretServiceClient.hasGraphicalSession }

    /// A collection `lock` locked: its object path and its label.
    public struct LockedCollection: Equatable, Sendable {
        public let path: String
        public let label: String

        public init(path: String, label: String) {
            self.path = path
            self.label = label
        }
    }

    /// Asks the provider to lock its default collection (what `vaultctl lock` does beside its own lock); the
    /// collection when this call locked it, nil when it was locked already. `beforeLocking` is told which
    /// collection this call is about to lock, before the provider is asked to: an intent recorded there
    /// survives a kill between the lock and anything after it.
    public func lockDefaultCollection(beforeLocking: (LockedCollection) -> Void = { _ in }) throws(SlotError) -> LockedCollection? {
        try run("locking the default collection", changes: true) { (c) throws(SecretServiceClient.Failure) -> LockedCollection? in
            // The label first: a locked KeePassXC database shows only its file name.
            let collection = try c.defaultCollection()
            let label = SlotErrorText.oneLine(c.label(ofCollection: collection), limit: 100)
            let locked = LockedCollection(path: collection, label: label)
            guard try c.lockCollection(beforeLocking: { _ in beforeLocking(locked) }) else { return nil }
            return locked
        }
    }

    /// Asks the provider to unlock `collection` (what `vaultctl unlock` does after PAM to undo `lock`),
    /// running its prompt (the keyring's password) as for a read.
    public func unlock(_ collection: LockedCollection) throws(SlotError) {
        try run("unlocking the collection '\(collection.label)'", changes: true) { (c) throws(SecretServiceClient.Failure) in
            guard try c.unlock([collection.path], purpose: "unlock the collection '\(collection.label)'").contains(collection.path) else {
                throw .slot(.locked("the provider did not say it unlocked the collection '\(collection.label)'"))
            }
        }
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        try run("reading slot '\(name)'") { (c) throws(SecretServiceClient.Failure) -> SecretBytes in
            // The item found before the presence gate, when it is still there: one round trip.
            if let secret = try c.secretFoundBeforeRead(slot: name) { return secret }
            // Otherwise a new search, the key exchange travelling with it: one round trip for both.
            guard let item = try c.newest(c.items(slot: name, openingSession: .now)) else { throw .slot(.empty(name)) }
            if item.locked {
                // The provider's own confirmation (KeePassXC's access dialog, gnome-keyring's unlock prompt), on
                // top of PAM, never instead of it.
                let unlocked = try c.unlock([item.path], purpose: "unlock slot '\(name)' for reading (it is locked)")
                guard unlocked.contains(item.path) else {
                    throw .slot(.locked("the provider did not unlock slot '\(name)' (its prompt completed without it: access denied?)"))
                }
            }
            return try c.secret(of: item.path, slot: name)
        }
    }

    public func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        guard (1...SecretBytes.maximumCount).contains(secret.count) else { throw .badSecretSize(secret.count) }
        try run("storing slot '\(name)'", changes: true) { (c) throws(SecretServiceClient.Failure) in
            try c.store(secret, attributes: Self.attributes(name), label: Self.label(for: name))
        }
    }

    public func unlockBeforeChange(_ name: SlotName) throws(SlotError) {
        try run("unlocking slot '\(name)'", changes: false) { (c) throws(SecretServiceClient.Failure) in
            let locked = try c.items(slot: name).filter(\.locked).map(\.path)
            guard !locked.isEmpty else { return }
            let unlocked = try c.unlock(locked, purpose: "unlock slot '\(name)' to change it (it is locked)")
            guard locked.allSatisfy(unlocked.contains) else {
                throw .slot(.locked("the provider did not unlock slot '\(name)' (its prompt completed without it: access denied?)"))
            }
        }
    }

    @discardableResult
    public func delete(_ name: SlotName) throws(SlotError) -> Bool {
        try run("deleting slot '\(name)'", changes: true) { (c) throws(SecretServiceClient.Failure) -> Bool in
            let items = try c.items(slot: name)
            let locked = items.filter(\.locked).map(\.path)
            if !locked.isEmpty {
                let unlocked = try c.unlock(locked, purpose: "unlock slot '\(name)' to delete it (it is locked)")
                guard locked.allSatisfy(unlocked.contains) else {
                    throw .slot(.locked("the provider did not unlock slot '\(name)' for the delete (its prompt completed without it: access denied?)"))
                }
            }
            try c.delete(items.map(\.path))
            return !items.isEmpty
        }
    }

    /// The slot names in the collection: one search for the item paths, then every item's `Attributes`
    /// asked for at once (pipelined), never the secrets.
    public func names() throws(SlotError) -> [SlotName] {
        try listing().names
    }

    public func listing() throws(SlotError) -> SlotListing {
        try run("listing slots") { (c) throws(SecretServiceClient.Failure) -> SlotListing in
            let (raw, locked) = try c.slotNames()
            let valid = raw.compactMap(SlotName.init)
            let places = locked.map { SlotErrorText.oneLine($0, limit: 100) }
            return SlotListing(names: Set(valid).sorted(), skipped: raw.count - valid.count, lockedPlaces: places)
        }
    }

    /// The attributes of slot `name`'s item.
    static func attributes(_ name: SlotName) -> [(String, String)] {
        [("xdg:schema", schemaName), (attribute, name.rawValue)]
    }
}
