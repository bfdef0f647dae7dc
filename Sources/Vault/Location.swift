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
        return Self.decide(recorded, record: record.filePath, among: modes) {
            beforeRead ? slot($0).holdingBeforeRead(name) : slot($0).holding(name)
        }
    }

    /// The rule itself, over holdings given by `ask` (each slot asked at most once, recorded slot first, then
    /// `modes` in their order: device, sync, then the fleet when one is configured). With two slots it gives
    /// what it gave before the fleet (`LoadModeThreeSlotTests` keeps that rule as its oracle).
    ///
    /// - The record names a slot: that slot's answer decides, unless it answered that it is empty; only then
    ///   do the others count (a record restored from a backup, seed 001): one that could not be asked makes
    ///   it "unknown", one copy is the value, two are `conflicting`. A recorded slot that could not be asked
    ///   is "unknown": another slot may hold an older copy that a store or move had not yet removed, and that
    ///   copy is never served as the value. A recorded slot not among `modes` (a fleet that is not
    ///   configured) is still asked: `ask` answers that it could not be.
    /// - No entry: the device slot, then the others. A device slot that cannot be looked at safely
    ///   (permissions, a file from elsewhere, its key missing) is an error in itself. Copies in two slots with
    ///   nothing to say which is the value: `conflicting`. One copy is the value unless another slot could
    ///   not be asked; a device copy alone keeps the sync slot's leniency (a server without a bus), not the
    ///   fleet's, which is configured only by choice.
    /// - A record that cannot be read is not "no record": every slot is asked; one copy is the value, two are
    ///   `conflicting`, as is one copy while another slot could not be asked (it may hold another), and a
    ///   slot that could not be asked makes it "unknown".
    static func decide(_ recorded: ModeRecord.Lookup, record: String, among modes: [SlotMode] = [.device, .sync],
                       _ ask: (SlotMode) -> Holding) -> LoadMode {
        switch recorded {
        case .recorded(let mode):
            switch ask(mode) {
            case .holds(let locked): return .mode(mode, locked: locked)
            case .unknown(let error): return .unknown(error)
            case .empty: break
            }
            var held: [(mode: SlotMode, locked: Bool)] = []
            for other in modes where other != mode {
                switch ask(other) {
                case .holds(let locked): held.append((other, locked))
                case .unknown(let error): return .unknown(error)
                case .empty: break
                }
            }
            guard held.count < 2 else {
                return .conflicting(record: record, detail: "names \(slotWords(mode)), which is empty, and \(copies(held.map(\.mode), among: modes))")
            }
            return held.first.map { .mode($0.mode, locked: $0.locked) } ?? .none
        case .absent, .unreadable:
            let inDevice = ask(.device)
            if case .unknown(let error) = inDevice { return .unknown(error) }
            var held: [(mode: SlotMode, locked: Bool)] = []
            var unasked: [(mode: SlotMode, error: SlotError)] = []
            for mode in modes {
                switch mode == .device ? inDevice : ask(mode) {
                case .holds(let locked): held.append((mode, locked))
                case .unknown(let error): unasked.append((mode, error))
                case .empty: break
                }
            }
            let says: String
            if case .unreadable(let detail) = recorded { says = "cannot be read (\(detail))" } else { says = "has no entry for it" }
            guard held.count < 2 else {
                return .conflicting(record: record, detail: "\(says), and \(copies(held.map(\.mode), among: modes))")
            }
            guard let copy = held.first else { return unasked.first.map { .unknown($0.error) } ?? .none }
            // A device copy with no entry is served while the Secret Service cannot be asked, as before the fleet.
            let lenient = recorded == .absent && copy.mode == .device
            guard let other = unasked.first(where: { !(lenient && $0.mode == .sync) }) else {
                return .mode(copy.mode, locked: copy.locked)
            }
            guard recorded == .absent else {
                return .conflicting(record: record, detail: "\(says), and \(askedWords(other.mode)), which may hold another copy, could not be asked (\(reason(other.error)))")
            }
            return .unknown(other.error)
        }
    }

    /// A slot in the words of `decide`'s details: "the device slot", "the sync slot", "the fleet".
    static func slotWords(_ mode: SlotMode) -> String { mode == .fleet ? "the fleet" : "the \(mode.rawValue) slot" }

    /// Who was not asked, in the words of `decide`'s details: the sync slot is "the Secret Service".
    static func askedWords(_ mode: SlotMode) -> String { mode == .sync ? "the Secret Service" : slotWords(mode) }

    /// "both slots hold a copy" when there are only two; otherwise which ones do.
    static func copies(_ holders: [SlotMode], among modes: [SlotMode]) -> String {
        if holders.count == 2 && modes.count == 2 { return "both slots hold a copy" }
        let names = holders.map(slotWords)
        let list = names.count > 1 ? names.dropLast().joined(separator: ", ") + " and " + names.last! : names.joined()
        return "\(list) \(holders.count == 2 ? "both" : "each") hold a copy"
    }

    /// `decide` with a plain recorded mode (nil: no entry), for tests and callers that have one.
    static func decide(recorded: SlotMode?, _ ask: (SlotMode) -> Holding) -> LoadMode {
        decide(recorded.map { .recorded($0) } ?? .absent, record: "modes.json", ask)
    }

    /// Says where `name` is, asking both slots; never prompts and never needs PAM.
    /// `deviceReady`: for a gated device slot, waits until its gate can be asked (the gate's hello) and throws
    /// why it cannot; the Secret Service's look is started before it, so that it overlaps the gate's start-up,
    /// and a gate that cannot be asked is the error at once, without waiting for that look (its thread ends
    /// with the process).
    public func status(_ name: SlotName, deviceReady: (() throws(VaultError) -> Void)? = nil) throws(VaultError) -> LocationStatus {
        let (recorded, inDevice, inSync) = try steadily { () throws(VaultError) in
            let recorded = try record.lookup(name)
            // A protected device slot answers from vaultctl-gate, another process, as the Secret Service
            // answers from its provider: the two looks wait at the same time (under the same lock). The
            // device look stays on this thread: the gate's client is used by one thread only.
            guard device is any GatedSlot else { return (recorded, device.holding(name), sync.holding(name)) }
            let (device, sync) = (self.device, self.sync)
            if let deviceReady {
                let inSync = BackgroundThread.later { sync.holding(name) }
                try deviceReady()
                let inDevice = device.holding(name)
                return (recorded, inDevice, inSync.value())
            }
            let (inDevice, inSync) = BackgroundThread.both({ device.holding(name) }, { sync.holding(name) })
            return (recorded, inDevice, inSync)
        }
        // The fleet has no look of its own here yet (F4 asks every slot at once): it is asked as `decide` needs
        // it, and where no fleet is configured only a record that names it asks, which asks nothing.
        let answer = Self.decide(recorded, record: record.filePath, among: modes) {
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
        if case .fleetNotConfigured = e {
            // The record names the fleet: whatever the other slots hold is not served in its place.
            let copies = [(SlotMode.device, inDevice), (.sync, inSync)].filter { if case .holds = $0.1 { return true } else { return false } }
            let notes = copies.map { "A copy is in the \($0.0.rawValue) slot, but it is not served as the value while the fleet cannot be asked." }
            return ("Could not ask the fleet about '\(name)': \(reason(e)).", notes)
        }
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
