import Slots

/// What `loadMode` may answer: the slot that really holds the value, nothing, or "could not look".
public enum LoadMode: Equatable, Sendable {
    /// This slot holds the value (`locked`: in a locked collection; held, but not readable now).
    case mode(SlotMode, locked: Bool)
    /// Every slot was asked and none holds a value.
    case none
    /// No slot was found holding it, and at least one could not be asked; the value may be there.
    case unknown(SlotError)
}

/// The honest status of a slot: only what vaultctl can know.
public struct LocationStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// The value is an item in the Secret Service. Delivery to other devices is never confirmed.
        case inSlot = "in-slot"
        /// The value is in the device slot and only there, as far as could be checked. Certain.
        case cannotLeaveDevice = "cannot-leave-device"
        /// The device slot is empty and the Secret Service could not be asked.
        case unknown
        /// Both slots were asked and both are empty.
        case none
    }

    public let slot: SlotName
    public let state: State
    /// The mode `loadMode` answered; nil for unknown and none.
    public let mode: SlotMode?
    public let message: String
    /// For a value in the device slot: what binds its key to this machine (`tpm2` or `machine-id`).
    public var binding: String? = nil
}

extension Vault {
    /// Trusts the recorded mode only when that slot actually holds a value; otherwise answers with the slot
    /// that really holds one; otherwise nothing, or "unknown" when a slot could not be asked.
    ///
    /// A failed check is never read as "empty", and an item in a locked collection counts as held.
    /// `beforeRead`: a gated read of the slot follows, so each slot asked may make ready what it needs
    /// for it (`Slot.holdingBeforeRead`).
    public func loadMode(_ name: SlotName, beforeRead: Bool = false) throws(VaultError) -> LoadMode {
        let recorded = try record.hint(for: name)
        // Lazily: a read whose recorded slot holds the value asks only that slot.
        return Self.decide(recorded: recorded) { beforeRead ? slot($0).holdingBeforeRead(name) : slot($0).holding(name) }
    }

    /// The rule itself, over holdings given by `ask` (asked in order, recorded slot first, each at most once).
    static func decide(recorded: SlotMode?, _ ask: (SlotMode) -> Holding) -> LoadMode {
        let order: [SlotMode] = recorded == .sync ? [.sync, .device] : [.device, .sync]
        var unknown: SlotError?
        for mode in order {
            switch ask(mode) {
            case .holds(let locked): return .mode(mode, locked: locked)
            case .empty: continue
            // A device slot that could not be looked at says something definite about this machine
            // (permissions, a file from elsewhere): its error wins over "the Secret Service did not answer".
            case .unknown(let error): unknown = mode == .device ? error : (unknown ?? error)
            }
        }
        if let unknown { return .unknown(unknown) }
        return .none
    }

    /// Says where `name` is, asking both slots; never prompts and never needs PAM.
    public func status(_ name: SlotName) throws(VaultError) -> LocationStatus {
        let (recorded, inDevice, inSync) = try steadily { () throws(VaultError) in
            (try record.hint(for: name), device.holding(name), sync.holding(name))
        }
        let answer = Self.decide(recorded: recorded) { $0 == .device ? inDevice : inSync }
        let mode: SlotMode?
        if case .mode(let m, _) = answer { mode = m } else { mode = nil }

        let binding = mode == .device ? device.binding(of: name) : nil
        if case .holds(let locked) = inSync {
            // Any value in the collection may leave this device, so the state says so even when reads use
            // a device copy; the message says which one reads use.
            let place = sync.place(of: name) ?? "the Secret Service"
            var message: String
            if mode == .device {
                message = "Slot '\(name)' is read from the device slot, but a copy is also in \(place). Whether that copy reaches your other devices depends on the provider; vaultctl cannot confirm it either way. Store or move the slot again to remove it."
                if let b = binding { message += " " + Self.bindingText(b) }
            } else {
                message = "Slot '\(name)' is in \(place). Whether it reaches your other devices depends on the provider; vaultctl cannot confirm that it does."
                if locked { message += " It is locked in the provider (a locked collection, or an access the provider asks you to confirm): reading it needs the provider to unlock it." }
                if case .holds = inDevice { message += " A copy is also in the device slot." }
            }
            return LocationStatus(slot: name, state: .inSlot, mode: mode, message: message, binding: binding)
        }
        if case .holds = inDevice {
            var message = "Slot '\(name)' is sealed to this machine and cannot leave this device."
            if let b = binding { message += " " + Self.bindingText(b) }
            if case .unknown(let e) = inSync {
                message += " A copy in the Secret Service is not ruled out: it could not be asked (\(Self.reason(e)))."
            }
            return LocationStatus(slot: name, state: .cannotLeaveDevice, mode: mode, message: message, binding: binding)
        }
        if case .unknown(let e) = inDevice {
            let message: String
            switch e {
            case .foreignMachine, .wrongSlot, .tampered:
                // We did look: there is a file, and it can never open here.
                message = "The device slot has a file for '\(name)' that cannot open here: \(Self.reason(e))."
            default:
                message = "Could not look in the device slot for '\(name)': \(Self.reason(e)). It may still be there."
            }
            return LocationStatus(slot: name, state: .unknown, mode: nil, message: message)
        }
        if case .unknown(let e) = inSync {
            return LocationStatus(slot: name, state: .unknown, mode: nil, message:
                "Could not ask the Secret Service about '\(name)': \(Self.reason(e)). It is not in the device slot, but it may still be in the keyring.")
        }
        return LocationStatus(slot: name, state: .none, mode: nil, message: "Slot '\(name)' holds no value.")
    }

    /// What a device-slot binding means, in one sentence (never claims the TPM unless the key is sealed by it).
    static func bindingText(_ binding: String) -> String {
        switch binding {
        case DeviceKeyBinding.tpm2.rawValue:
            return "Its key is sealed by this machine's TPM: it cannot be unsealed on any other machine, even from a copy of the state folder."
        default:
            return "Its key is bound to this machine's id (/etc/machine-id): a restored backup does not open elsewhere, but a deliberate copy of the state folder to a machine with the same id does ('vaultctl device-key seal' moves it under a TPM)."
        }
    }

    static func reason(_ e: SlotError) -> String {
        switch e {
        case .serviceUnavailable(let r), .locked(let r): return r
        default:
            var text = SlotErrorText.describe(e)
            if text.hasSuffix(".") { text.removeLast() }
            return text
        }
    }
}
