import GateProtocol
import Slots
import VaultRules

/// The façade the CLI uses: WHAT may be said about a slot and WHO may read it.
///
/// The vault owns the backends, the mode record and the presence gate. It never trusts the record alone:
/// reads and deletes ask the slots themselves, recorded slot first.
public struct Vault: Sendable {
    public let device: any Slot
    public let sync: any Slot
    /// The fleet (issue 35), when one is configured; nil otherwise, and always for now: it is then never
    /// asked, and a record that names it makes the value "unknown".
    public let fleet: (any Slot)?
    public let record: ModeRecord
    public let gate: any PresenceGate
    /// A lock file that serializes changes (store, move, delete) across processes, so two stores of one
    /// slot into different modes cannot each delete the other's copy. nil: no cross-process lock (tests).
    public let changeLock: String?
    /// Which destructive changes need a fresh authentication (the policy's `gate` section), read only when
    /// such a change is about to happen, so a malformed policy stops no first store.
    public let changeGates: @Sendable () throws(VaultError) -> ChangeGates
    /// Run under the change lock before every change: throws when no change may happen now (a vault being
    /// moved behind the gate, whose move holds the same lock while it lists and moves the slots).
    public let beforeChange: @Sendable () throws(VaultError) -> Void
    /// Run under the change lock before any value is written to the device slot (a first one or a
    /// replacement): throws when no secret may be written there (a vault in the state folder while
    /// vaultctl-gate is installed and would protect it: a value written there, replacement or not, is a new
    /// secret readable by every program running as the user, under a key such a program may have put there).
    /// nil: the device slot takes values.
    public let beforeDeviceWrite: (@Sendable (SlotName) throws(VaultError) -> Void)?

    public init(device: any Slot, sync: any Slot, fleet: (any Slot)? = nil, record: ModeRecord, gate: any PresenceGate,
                changeLock: String? = nil,
                changeGates: @escaping @Sendable () throws(VaultError) -> ChangeGates = { .all },
                beforeChange: @escaping @Sendable () throws(VaultError) -> Void = {},
                beforeDeviceWrite: (@Sendable (SlotName) throws(VaultError) -> Void)? = nil) {
        self.device = device
        self.sync = sync
        self.fleet = fleet
        self.record = record
        self.gate = gate
        self.changeLock = changeLock
        self.changeGates = changeGates
        self.beforeChange = beforeChange
        self.beforeDeviceWrite = beforeDeviceWrite
    }

    /// Runs `body` holding the change lock (an exclusive `flock`), when there is one. Waits at most
    /// `changeLockWait` for another change (a stopped `store` must not hang every later one): then 75.
    func serialized<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        guard let changeLock else { return try body() }
        do throws(SlotError) { try SecureFile.ensurePrivateFolder(SecureFile.parent(of: changeLock)) } catch {
            throw .slot(error)
        }
        let lock = try FileLock(path: changeLock, waitingAtMost: Self.changeLockWait)
        defer { lock.release() }
        try beforeChange()
        return try body()
    }

    /// Runs `body` holding the change lock shared, so that no store, move or delete is half done while it
    /// looks: a value that moves between the slots is found in one of them, never in neither. Held only for
    /// slot and file work (bounded), never across a prompt; never taken while `serialized` holds it.
    func steadily<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        guard let changeLock else { return try body() }
        guard let lock = try FileLock.shared(ifPresent: changeLock, waitingAtMost: Self.changeWait) else {
            return try body()
        }
        defer { lock.release() }
        return try body()
    }

    /// How long a look waits for a change in progress (one Secret Service operation's bound).
    static let changeWait = SlotMode.syncOperationSeconds

    /// How long a change waits for another one: a change holds the lock for up to three Secret Service
    /// operations (write, look, delete), each bounded by its timeout.
    static let changeLockWait = 3 * SlotMode.syncOperationSeconds

    public func slot(_ mode: SlotMode) -> any Slot {
        switch mode {
        case .device: return device
        case .sync: return sync
        case .fleet: return fleet ?? UnconfiguredFleet(configuration: fleetConfiguration)
        }
    }

    /// The slots that count, in the order a value is looked for when the record names none: device, sync,
    /// then the fleet when one is configured.
    public var modes: [SlotMode] { fleet == nil ? [.device, .sync] : [.device, .sync, .fleet] }

    /// Where the fleet's configuration is: `fleet.json` in the config folder, beside the mode record.
    public var fleetConfiguration: String { "\(record.folder)/fleet.json" }

    /// What a store did beyond writing: a note for the person when an old copy could not be removed.
    public struct StoreOutcome: Sendable {
        public let warning: String?
        /// Set when the record said the slot was in the sync slot and the Secret Service answering now did not
        /// hold it (another provider's keyring, another session's): the words that say the store made a new
        /// value and that such a copy, if any, stays where it is.
        public var recordedElsewhere: String? = nil
    }

    /// Writes `secret` to the `mode` slot, then records it, then removes any copy from the other slots, so a
    /// crash at any point leaves the secret readable.
    /// `expectingEmpty` (a store that was let through without a password because the slot held nothing):
    /// a value another command stored meanwhile is not replaced; `changedMeanwhile` (75) instead.
    public func store(_ name: SlotName, _ secret: SecretBytes, mode: SlotMode,
                      expectingEmpty: Bool = false) throws(VaultError) -> StoreOutcome {
        guard (1...SecretBytes.maximumCount).contains(secret.count) else {
            throw .slot(.badSecretSize(secret.count))
        }
        return try serialized { () throws(VaultError) -> StoreOutcome in
            var syncRecordedButEmpty = false
            if expectingEmpty {
                let (held, recorded) = (try loadMode(name), try record.lookup(name))
                if Self.replaces(held, recorded: recorded, storing: mode) { throw .changedMeanwhile(name) }
                syncRecordedButEmpty = held == .none && recorded == .recorded(.sync)
            }
            var outcome = try storeLocked(name, secret, mode: mode, syncRecordedButEmpty: &syncRecordedButEmpty)
            if syncRecordedButEmpty {
                outcome.recordedElsewhere = "\(notInRunningService([name], opening: false)) This is a new value; a copy in another keyring, if any, stays there"
            }
            return outcome
        }
    }

    /// `syncRecordedButEmpty`: set when the record named the sync slot and the sync slot, asked after the
    /// write into the device slot, holds nothing.
    private func storeLocked(_ name: SlotName, _ secret: SecretBytes, mode: SlotMode,
                             syncRecordedButEmpty: inout Bool) throws(VaultError) -> StoreOutcome {
        // A record we could not update is found before anything is written, so a bad record loses nothing.
        let previous = try record.mode(of: name)
        try record.checkLock()
        try writeValue(mode, name, secret)
        try record.set(name, mode)
        // The slots that count, and the one the record named if it does not count (a fleet not configured
        // here): its old copy cannot be checked, and that is said.
        var others = modes.filter { $0 != mode }
        if let previous, previous != mode, !others.contains(previous) { others.append(previous) }
        let warnings = others.compactMap { removeOldCopy(name, from: $0, previous: previous, syncRecordedButEmpty: &syncRecordedButEmpty) }
        return StoreOutcome(warning: warnings.isEmpty ? nil : warnings.joined(separator: "; "))
    }

    /// After a store into another slot: removes the old copy of `name` from `mode`, or says why it is still
    /// there (nil: nothing to say).
    private func removeOldCopy(_ name: SlotName, from mode: SlotMode, previous: SlotMode?,
                               syncRecordedButEmpty: inout Bool) -> String? {
        let other = slot(mode)
        switch other.holding(name) {
        case .empty:
            if previous == .sync && other.mode == .sync { syncRecordedButEmpty = true }
            return nil
        case .holds(locked: true):
            return "the old copy in the \(other.mode.rawValue) slot is locked in the Secret Service and is still there; unlock it and store again, or delete it"
        case .holds:
            do throws(VaultError) {
                try deleteValue(other.mode, name)
                return nil
            } catch {
                return "the old copy in the \(other.mode.rawValue) slot is still there: \(Self.reason(error))"
            }
        case .unknown(let error):
            // Only worth saying when we had put it there: an absent keyring on a server is normal.
            guard previous == other.mode else { return nil }
            return "could not check \(Self.slotWords(other.mode)) for the old copy: \(Self.reason(error))"
        }
    }

    /// Finds the slot that holds `name` (see `loadMode`), or throws: `empty` when every slot was asked and
    /// none holds it, `couldNotLook` when one could not be asked (the value may be there). A device slot
    /// that cannot be looked at safely (permissions, …) is an error in itself.
    /// `beforeRead`: see `loadMode`.
    public func locate(_ name: SlotName, beforeRead: Bool = false) throws(VaultError) -> (mode: SlotMode, locked: Bool) {
        // Callers hold the change lock (shared or exclusive), so no change is half done while this looks.
        switch try loadMode(name, beforeRead: beforeRead) {
        case .mode(let mode, let locked): return (mode, locked)
        case .none: throw .slot(.empty(name))
        case .conflicting(let path, let detail):
            throw .configuration(path: path, detail: "vaultctl cannot tell which copy of slot '\(name)' is the value: this record, which says so, \(detail); so none is used. Restore the record from a backup, or store the value again ('vaultctl store \(name)' replaces both copies; move a record that cannot be read aside first)")
        case .unknown(let error):
            switch error {
            case .serviceUnavailable, .locked: throw .couldNotLook(name, error)
            default: throw .slot(error)  // the device slot: permissions, a foreign or damaged file
            }
        }
    }

    /// The gated read: locate the value, verify presence (fresh PAM), then read it. A locked value is
    /// refused before the password prompt, unless its slot can ask a person to unlock it (the provider's own
    /// prompt on a desktop, after PAM, never instead of it).
    public func read(_ name: SlotName) throws(VaultError) -> SecretBytes {
        if let value = try readInOneRequest(name) { return value }
        let (mode, locked) = try steadily { () throws(VaultError) in try locate(name, beforeRead: true) }
        if locked && !slot(mode).canAskToUnlock {
            throw .slot(slot(mode).lockedValue("slot '\(name)'"))
        }
        try gate.verify(reason: PromptReason.read(name).text, slots: [name])
        return try steadily { () throws(VaultError) -> SecretBytes in try readAfterGate(name, from: mode) }
    }

    /// A protected vault's device slot, when the record names it: one request to the gate, which checks the
    /// vault lock, the audit log and the rate limit, finds the value (a refusal before any prompt when it is
    /// not there), asks the person, writes its line and reads: what `locate`, `verify` and the read do in
    /// three. Nil when this does not apply, or the slot turned out empty (the two slots are then looked at as
    /// for any read).
    func readInOneRequest(_ name: SlotName) throws(VaultError) -> SecretBytes? {
        guard let slot = device as? GateSlot, let presence = gate as? GatePresence, slot.client === presence.client,
              try record.lookup(name) == .recorded(.device) else { return nil }
        // Not under the change lock (never held across a prompt): the gate reads under its store's own lock, and
        // a value moved meanwhile is "empty" here and found by the general path.
        do throws(VaultError) {
            return try slot.gatedRead(name)
        } catch {
            if case .slot(.empty) = error { return nil }
            throw error
        }
    }

    /// Reads `name` from `mode`, where it was found before the prompt (the caller holds the change lock
    /// shared). If a store or move took the value to the other slot while the person answered, it is looked
    /// up once more (no new prompt).
    func readAfterGate(_ name: SlotName, from mode: SlotMode) throws(VaultError) -> SecretBytes {
        var mode = mode
        for attempt in 0..<3 {
            let failure: SlotError
            do throws(VaultError) { return try readValue(mode, name) } catch {
                guard case .slot(let e) = error else { throw error }
                failure = e
            }
            switch failure {
            case .empty, .serviceUnavailable:
                // Moved meanwhile? Look again; give up when it is not somewhere else.
                guard attempt < 2, let (now, locked) = try? locate(name), now != mode, !locked else {
                    throw .slot(failure)
                }
                mode = now
            default:
                throw .slot(failure)
            }
        }
        throw .slot(.empty(name))
    }

    /// Removes `name` from every slot and from the record. Throws `empty` when none held it, and
    /// `couldNotLook` when the sync slot could not be asked and no other slot held it (a fleet that could
    /// not be asked: its own error).
    /// `expectingEmpty` (a delete let through without a password because the slot held nothing): a value
    /// another command stored meanwhile is not removed; `changedMeanwhile` (75) instead. Decided under the
    /// change lock, on what is there then.
    @discardableResult
    public func delete(_ name: SlotName, expectingEmpty: Bool = false) throws(VaultError) -> StoreOutcome {
        // A copy the provider keeps locked is unlocked first (its prompt, after PAM): no wait for a person
        // may hold the change lock.
        if !expectingEmpty, sync.canAskToUnlock, case .holds(locked: true) = sync.holding(name) {
            do { try sync.unlockBeforeChange(name) } catch { throw .slot(error) }
        }
        return try serialized { () throws(VaultError) -> StoreOutcome in
            guard expectingEmpty else { return try deleteLocked(name) }
            // Asked nothing: so it changes nothing, not even the record (its entry may name a value that this
            // process cannot see, through a state folder or a bus of another's choosing).
            guard try loadMode(name) == .none else { throw .changedMeanwhile(name) }
            throw .slot(.empty(name))
        }
    }

    func deleteLocked(_ name: SlotName) throws(VaultError) -> StoreOutcome {
        // A record we cannot update stops the delete before anything is removed.
        let records = try record.load()
        let recorded = records[name]
        try record.checkLock()
        // The order reads look in: the recorded slot (counted or not: a fleet not configured here), then the
        // slots that count.
        let order = (recorded.map { [$0] } ?? []) + modes.filter { $0 != recorded }
        // Ask the slots other than the device first, so a locked keyring refuses the delete before anything is
        // removed. (A copy the provider kept locked was unlocked before the change lock; locked now, it was
        // locked again meanwhile: refused, never a prompt that waits for a person while the lock is held.)
        var held: [SlotMode: Holding] = [:]
        for mode in order where mode != .device {
            held[mode] = slot(mode).holding(name)
            if case .holds(locked: true) = held[mode] {
                throw .slot(slot(mode).lockedValue("slot '\(name)'"))
            }
        }
        // The copies are removed in the opposite order to reads, so the one reads see goes last. A delete cut
        // short then leaves the value it was asked to remove (or nothing), never an older copy that a store
        // had not yet cleaned up.
        var removed: [SlotMode] = []
        for mode in order.reversed() {
            if mode == .device {
                if try deleteValue(.device, name) { removed.append(mode) }
                continue
            }
            guard case .holds = held[mode] else { continue }
            try deleteValue(mode, name)
            removed.append(mode)
        }
        let unasked = order.compactMap { mode -> (mode: SlotMode, error: SlotError)? in
            if case .unknown(let error) = held[mode] { return (mode, error) }
            return nil
        }
        if let (mode, error) = unasked.first {
            if removed.isEmpty {
                // The Secret Service's own words for a keyring that could not be asked; any other slot's error is its own.
                if mode == .sync { throw .couldNotLook(name, error) }
                throw .slot(error)
            }
            try record.set(name, nil)
            // Said only to someone who uses that slot (the record names it for some value): for everyone else,
            // without a bus, a line on every delete about a keyring they never used.
            guard records.values.contains(mode) else { return StoreOutcome(warning: nil) }
            let deleted = removed.reversed().map { $0.rawValue }.joined(separator: " and ")
            return StoreOutcome(warning: "the \(deleted) cop\(removed.count == 1 ? "y is" : "ies are") deleted, but \(Self.askedWords(mode)) could not be asked (\(Self.reason(error))); a copy there, if any, is still there")
        }
        try record.set(name, nil)
        if removed.isEmpty { throw .slot(.empty(name)) }
        return StoreOutcome(warning: nil)
    }

    /// One line of `list`: a slot name and where a value for it is.
    public struct Entry: Sendable, Equatable {
        public let name: SlotName
        public let mode: SlotMode
    }

    /// Every slot name with its mode, device slots first asked, reserved names left out; the sync slot's
    /// trouble (`syncError`) and what it said about how complete its names are (`sync`) beside them.
    public func list() throws(VaultError) -> (entries: [Entry], syncError: SlotError?, sync: SlotListing) {
        var entries: [Entry] = []
        do {
            entries += try device.names().map { Entry(name: $0, mode: .device) }
        } catch { throw .slot(error) }
        var syncError: SlotError?
        var listing = SlotListing(names: [])
        do {
            listing = try sync.listing()
            entries += listing.names.map { Entry(name: $0, mode: .sync) }
        } catch {
            syncError = error
        }
        // vaultctl's own values are not a person's to see in a listing (`SlotName.isReserved`).
        entries.removeAll { $0.name.isReserved }
        entries.sort { ($0.name, $0.mode.rawValue) < ($1.name, $1.mode.rawValue) }
        return (entries, syncError, listing)
    }

    /// The slots the mode record names as stored in the sync slot that `entries` (a listing of both slots)
    /// does not hold anywhere: recorded in a keyring that is not the one answering now (another provider,
    /// another session's), or deleted there by another program. Empty when the record cannot be read.
    public func recordedInSyncButNotHeld(_ entries: [Entry]) -> [SlotName] {
        let held = Set(entries.map(\.name))
        let records = (try? record.load()) ?? [:]
        return records.filter { $0.value == .sync && !held.contains($0.key) && !$0.key.isReserved }.map(\.key).sorted()
    }

    /// The one sentence for slots (`names`) the mode record names as stored in the sync slot that the Secret
    /// Service answering now (`provider`, its words) does not hold (issue 36): `status`, `list`, `store`,
    /// `read`, `move` and `delete` all say it, so none of them calls such a slot plainly empty.
    public static func notInRunningService(_ names: [SlotName], provider: String?, opening: Bool = true) -> String {
        let running = provider.map { " (\($0))" } ?? ""
        let shown = names.prefix(10).map { "'\($0)'" }.joined(separator: ", ") + (names.count > 10 ? " and \(names.count - 10) more" : "")
        let one = names.count == 1
        return "\(opening ? "S" : "s")lot\(one ? "" : "s") \(shown) \(one ? "is" : "are") not in the Secret Service running now\(running); recorded as stored in the sync slot — another keyring?"
    }

    /// `opening`: the sentence opens a message (a capital), else it follows "warning: ".
    public func notInRunningService(_ names: [SlotName], opening: Bool = true) -> String {
        Self.notInRunningService(names, provider: sync.provider(), opening: opening)
    }

    /// `notInRunningService` for `name` when the mode record names the sync slot for it; nil otherwise (or
    /// when the record cannot be read). For a command that found `name` in neither slot.
    public func notInRunningService(ifRecorded name: SlotName) -> String? {
        guard (try? record.lookup(name)) == .recorded(.sync) else { return nil }
        return notInRunningService([name])
    }

    /// Whether the mode record names any slot as stored in the sync slot (true when it cannot be read): a
    /// Secret Service that cannot be asked is then worth a word.
    public func recordNamesSyncSlots() -> Bool {
        (try? record.load().values.contains(.sync)) ?? true
    }
}
