import GateProtocol
import Slots
import VaultRules

/// What `loadMode` may answer: the slot that really holds the value, nothing, or "could not look".
public enum LoadMode: Equatable, Sendable {
    /// This slot holds the value (`locked`: in a locked collection; held, but not readable now).
    case mode(SlotMode, locked: Bool)
    /// Every slot was asked and none holds a value.
    case none
    /// The slot that would hold the value could not be asked (the recorded one; a device slot that cannot
    /// be looked at safely; any slot when the record cannot be read), so the value may be there, or be
    /// another copy than the one that can be seen.
    case unknown(SlotError)
    /// The record that says which copy is the value cannot be read (or has no entry), and there is more
    /// than one copy (or the Secret Service, which may hold another, could not be asked): vaultctl cannot
    /// tell which is the value, so it serves none. `record`: the record's path; `detail`: what the record
    /// and the slots said ("cannot be read (…), and both slots hold a copy").
    case conflicting(record: String, detail: String)
}

/// The honest status of a slot: only what vaultctl can know.
public struct LocationStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// The value is an item in the Secret Service. Delivery to other devices is never confirmed.
        case inSlot = "in-slot"
        /// The value is in the device slot and only there, as far as could be checked, under a key sealed by
        /// this machine's TPM: no copy of it opens anywhere else. Certain.
        case cannotLeaveDevice = "cannot-leave-device"
        /// The value is in the device slot and only there, as far as could be checked, under a key bound to
        /// this machine's id (no TPM): a restored backup does not open elsewhere, but a deliberate copy of
        /// the state folder to a machine that presents the same id does. Not "cannot leave this device".
        case onThisDevice = "on-this-device"
        /// The device slot is empty and the Secret Service could not be asked.
        case unknown
        /// Both slots were asked and both are empty.
        case none
    }

    public let slot: SlotName
    public let state: State
    /// The mode `loadMode` answered; nil for unknown and none.
    public let mode: SlotMode?
    /// One sentence: where the value is, or why that is not known. Said first, after the state.
    public var summary: String
    /// Facts that qualify the summary or need the person: a lock, another copy, a copy not ruled out, a
    /// boundary not in effect. Said by default, each on its own line.
    public var notes: [String] = []
    /// What the summary means: how far an item may travel, what binds a key, what guards the device slot.
    /// Said with `--verbose`.
    public var details: [String] = []
    /// For a value in the device slot: what binds its key to this machine (`tpm2` or `machine-id`).
    public var binding: String? = nil
    /// What the mode record says of the slot (nil: no entry, or a record that cannot be read).
    public var recorded: SlotMode? = nil

    public init(slot: SlotName, state: State, mode: SlotMode?, summary: String, notes: [String] = [],
                details: [String] = [], binding: String? = nil, recorded: SlotMode? = nil) {
        self.slot = slot
        self.state = state
        self.mode = mode
        self.summary = summary
        self.notes = notes
        self.details = details
        self.binding = binding
        self.recorded = recorded
    }

    /// Everything, as one paragraph: the summary, the notes, then the details (`--json`'s `message`).
    public var message: String { ([summary] + notes + details).joined(separator: " ") }
}

extension Vault {
    /// Trusts the recorded mode only when that slot actually holds a value; otherwise answers with the slot
    /// that really holds one; otherwise nothing, or "unknown" when a slot could not be asked.
    ///
    /// A failed check is never read as "empty", and an item in a locked collection counts as held.
    /// `beforeRead`: a gated read of the slot follows, so each slot asked may make ready what it needs
    /// for it (`Slot.holdingBeforeRead`).
    public func loadMode(_ name: SlotName, beforeRead: Bool = false) throws(VaultError) -> LoadMode {
        let recorded = try record.lookup(name)
        // Lazily: a read whose recorded slot holds the value asks only that slot.
        return Self.decide(recorded, record: record.filePath) {
            beforeRead ? slot($0).holdingBeforeRead(name) : slot($0).holding(name)
        }
    }

    /// The rule itself, over holdings given by `ask` (each slot asked at most once, recorded slot first).
    ///
    /// - The record names a slot: that slot's answer decides, unless it answered that it is empty; only then
    ///   does the other slot's answer count (a record restored from a backup, seed 001). A recorded slot
    ///   that could not be asked is "unknown": the other slot may hold an older copy that a store or move
    ///   had not yet removed, and that copy is never served as the value.
    /// - No entry: the device slot, then the sync slot. A device slot that cannot be looked at safely
    ///   (permissions, a file from elsewhere, its key missing) is an error in itself. Copies in both slots
    ///   with nothing to say which is the value: `conflicting`.
    /// - A record that cannot be read is not "no record": both slots are asked; one copy is the value, two
    ///   are `conflicting`, and a slot that could not be asked makes it "unknown".
    static func decide(_ recorded: ModeRecord.Lookup, record: String, _ ask: (SlotMode) -> Holding) -> LoadMode {
        switch recorded {
        case .recorded(let mode):
            switch ask(mode) {
            case .holds(let locked): return .mode(mode, locked: locked)
            case .unknown(let error): return .unknown(error)
            case .empty: break
            }
            let other: SlotMode = mode == .device ? .sync : .device
            switch ask(other) {
            case .holds(let locked): return .mode(other, locked: locked)
            case .unknown(let error): return .unknown(error)
            case .empty: return .none
            }
        case .absent:
            let inDevice = ask(.device)
            if case .unknown(let error) = inDevice { return .unknown(error) }
            let inSync = ask(.sync)
            switch (inDevice, inSync) {
            case (.holds, .holds):
                return .conflicting(record: record, detail: "has no entry for it, and both slots hold a copy")
            case (.holds(let locked), _): return .mode(.device, locked: locked)  // a sync slot that could not be asked: as before
            case (_, .holds(let locked)): return .mode(.sync, locked: locked)
            case (_, .unknown(let error)): return .unknown(error)
            default: return .none
            }
        case .unreadable(let detail):
            let inDevice = ask(.device)
            if case .unknown(let error) = inDevice { return .unknown(error) }
            let inSync = ask(.sync)
            switch (inDevice, inSync) {
            case (.holds, .unknown(let error)):
                return .conflicting(record: record, detail: "cannot be read (\(detail)), and the Secret Service, which may hold another copy, could not be asked (\(reason(error)))")
            case (_, .unknown(let error)): return .unknown(error)
            case (.holds, .holds): return .conflicting(record: record, detail: "cannot be read (\(detail)), and both slots hold a copy")
            case (.holds(let locked), _): return .mode(.device, locked: locked)
            case (_, .holds(let locked)): return .mode(.sync, locked: locked)
            default: return .none
            }
        }
    }

    /// `decide` with a plain recorded mode (nil: no entry), for tests and callers that have one.
    static func decide(recorded: SlotMode?, _ ask: (SlotMode) -> Holding) -> LoadMode {
        decide(recorded.map { .recorded($0) } ?? .absent, record: "modes.json", ask)
    }

    /// Says where `name` is, asking both slots; never prompts and never needs PAM.
    public func status(_ name: SlotName) throws(VaultError) -> LocationStatus {
        let (recorded, inDevice, inSync) = try steadily { () throws(VaultError) in
            let recorded = try record.lookup(name)
            // A protected device slot answers from vaultctl-gate, another process, as the Secret Service
            // answers from its provider: the two looks wait at the same time (under the same lock). The
            // device look stays on this thread: the gate's client is used by one thread only.
            guard device is any GatedSlot else { return (recorded, device.holding(name), sync.holding(name)) }
            let (device, sync) = (self.device, self.sync)
            let (inDevice, inSync) = BackgroundThread.both({ device.holding(name) }, { sync.holding(name) })
            return (recorded, inDevice, inSync)
        }
        // The fleet is asked only when the record names it, and with no fleet configured that asks nothing.
        let answer = Self.decide(recorded, record: record.filePath) {
            $0 == .device ? inDevice : $0 == .sync ? inSync : slot($0).holding(name)
        }
        var status = Self.describe(name, answer, recorded: recorded, inDevice: inDevice, inSync: inSync,
                                   record: record.filePath, device: device, sync: sync)
        status.recorded = recorded.mode
        return status
    }

    /// The words for what `decide` answered (`answer`), from what each slot said.
    static func describe(_ name: SlotName, _ answer: LoadMode, recorded: ModeRecord.Lookup, inDevice: Holding, inSync: Holding,
                         record: String, device: any Slot, sync: any Slot) -> LocationStatus {
        let mode: SlotMode
        switch answer {
        case .mode(let m, _): mode = m
        case .none:
            guard recorded == .recorded(.sync) else {
                return LocationStatus(slot: name, state: .none, mode: nil, summary: "Slot '\(name)' holds no value.")
            }
            // The record says it went to the sync slot, and the Secret Service answering now does not hold it: a
            // keyring of another provider, or one this session does not run, may (issue 36). Both slots answered
            // that they are empty, so it is "none" here, and the words say where else it may be.
            return LocationStatus(slot: name, state: .none, mode: nil,
                summary: Vault.notInRunningService([name], provider: sync.provider()),
                notes: ["A 'vaultctl store \(name)' here makes a new value; a copy in another keyring stays there."],
                details: ["The mode record (\(record)) says the value went to the sync slot, but no collection of the provider that answers on this session bus holds it, and the device slot is empty: it may be in a keyring that is not running here (another provider, another session's), or another program deleted it."])
        case .conflicting(let path, let detail):
            return LocationStatus(slot: name, state: .unknown, mode: nil, summary:
                "vaultctl cannot tell which copy of slot '\(name)' is the value: the mode record (\(path)) that says so \(detail).")
        case .unknown(let e):
            let (summary, notes) = unknownText(name, e, recorded: recorded.mode, inDevice: inDevice, inSync: inSync)
            return LocationStatus(slot: name, state: .unknown, mode: nil, summary: summary, notes: notes)
        }

        let binding = mode == .device ? device.binding(of: name) : nil
        let bindingDetail = binding.map { [bindingText($0, gated: device is any GatedSlot)] } ?? []
        if case .holds(let locked) = inSync {
            // Any value in the collection may leave this device, so the state says so even when reads use
            // a device copy; the words say which one reads use.
            let place = sync.place(of: name) ?? "the Secret Service"
            if mode == .device {
                return LocationStatus(slot: name, state: .inSlot, mode: mode,
                    summary: "Slot '\(name)' is read from the device slot, but a copy is also in \(place).",
                    notes: ["Store or move the slot again to remove that copy."],
                    details: ["Whether that copy reaches your other devices depends on the provider; vaultctl cannot confirm it either way."] + bindingDetail,
                    binding: binding)
            }
            var notes: [String] = []
            if locked { notes.append("It is locked in the provider (a locked collection, or an access the provider asks you to confirm): reading it needs the provider to unlock it.") }
            if case .holds = inDevice { notes.append("A copy is also in the device slot.") }
            return LocationStatus(slot: name, state: .inSlot, mode: mode, summary: "Slot '\(name)' is in \(place).", notes: notes,
                details: ["Whether it reaches your other devices depends on the provider; vaultctl cannot confirm that it does."],
                binding: binding)
        }
        // Only a key sealed by the TPM guarantees that no copy opens elsewhere; the machine id does not.
        let sealedByTPM = binding == DeviceKeyBinding.tpm2.rawValue
        // "Not in the Secret Service" only when it answered so: a look that failed rules nothing out.
        var syncAnswered = true
        if case .unknown = inSync { syncAnswered = false }
        let summary = sealedByTPM ? "Slot '\(name)' is sealed to this machine and cannot leave this device."
                    : syncAnswered ? "Slot '\(name)' is in the device slot on this machine, not in the Secret Service."
                                   : "Slot '\(name)' is in the device slot on this machine."
        var notes: [String] = []
        if case .unknown(let e) = inSync {
            notes.append("A copy in the Secret Service is not ruled out: it could not be asked (\(reason(e))).")
        }
        return LocationStatus(slot: name, state: sealedByTPM ? .cannotLeaveDevice : .onThisDevice, mode: mode,
                              summary: summary, notes: notes, details: bindingDetail, binding: binding)
    }

    /// Why a status is "unknown": the slot that could not be asked (the summary), and what the other one
    /// holds (a note).
    static func unknownText(_ name: SlotName, _ e: SlotError, recorded: SlotMode?, inDevice: Holding, inSync: Holding) -> (String, [String]) {
        if case .unknown = inDevice {
            switch e {
            case .foreignMachine, .wrongSlot, .tampered:
                // We did look: there is a file, and it can never open here.
                return ("The device slot has a file for '\(name)' that cannot open here: \(reason(e)).", [])
            default:
                return ("Could not look in the device slot for '\(name)': \(reason(e)).", ["It may still be there."])
            }
        }
        if case .holds = inDevice {
            let why = recorded == .sync ? "the mode record says the value is in the Secret Service"
                                        : "the mode record cannot be read, so the Secret Service may hold another copy"
            return ("Could not ask the Secret Service about '\(name)': \(reason(e)).",
                    ["A copy is in the device slot, but \(why): that copy is not served as the value until the Secret Service can be asked."])
        }
        return ("Could not ask the Secret Service about '\(name)': \(reason(e)).", ["It is not in the device slot, but it may still be in the keyring."])
    }

    /// What a device-slot binding means, in one sentence (never claims the TPM unless the key is sealed by it).
    static func bindingText(_ binding: String, gated: Bool = false) -> String {
        if gated {
            if binding == DeviceKeyBinding.tpm2.rawValue {
                return "Its key is in vaultctl-gate's store (/var/lib/vaultctl), sealed by this machine's TPM: no program running as you can read it, and it cannot be unsealed on any other machine, even from a copy of the store."
            }
            return "Its key is in vaultctl-gate's store (/var/lib/vaultctl), bound to this machine's id: no program running as you can read it, and a copy of the store that root makes to a machine with the same id would open there."
        }
        switch binding {
        case DeviceKeyBinding.tpm2.rawValue:
            return "Its key is sealed by this machine's TPM: it cannot be unsealed on any other machine, even from a copy of the state folder."
        default:
            // `device-key seal` is offered only where a TPM can be opened (naming it costs an access() check).
            let seal = TPMChoice.fromEnvironment() != nil
                ? "; 'vaultctl device-key seal' moves it under this machine's TPM, after which no copy opens elsewhere" : ""
            return "Its key is bound to this machine's id (/etc/machine-id): a restored backup does not open elsewhere, but a deliberate copy of the state folder to a machine with the same id does\(seal)."
        }
    }

    /// A slot error's words inside another message: `VaultError.reason`.
    static func reason(_ e: SlotError) -> String { VaultError.reason(e) }
}
