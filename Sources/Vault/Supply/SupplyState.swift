import GateProtocol
import Slots
import VaultRules

/// Which slots may be supplied to other programs, and when each was last supplied: `<state>/supply.json`.
///
/// It lives in the state folder, not the config: permission to hand a secret to programs is a decision
/// about this machine and does not travel with a restored config.
public struct SupplyState: Sendable {
    /// When a slot was last supplied (seconds since the epoch), and from what origin.
    public struct LastSupply: Sendable, Equatable {
        public var time: Double
        public var origin: String
        /// The program it went to came back for it (an askpass repeat): it was not accepted, and counted as
        /// a failed attempt.
        public var rejected: Bool = false
    }

    let file: StateFile<Document>
    let allowByDefault: Bool

    public init(stateFolder: String, allowByDefault: Bool) {
        file = StateFile(folder: stateFolder, name: "supply.json", empty: Document())
        self.allowByDefault = allowByDefault
    }

    public func isAllowed(_ name: SlotName) throws(VaultError) -> Bool {
        try file.load().slots[name.rawValue]?.allowed ?? allowByDefault
    }

    public func setAllowed(_ name: SlotName, _ allowed: Bool) throws(VaultError) {
        try file.update { doc in doc.slots[name.rawValue, default: Entry()].allowed = allowed }
    }

    public func lastSupply(_ name: SlotName) throws(VaultError) -> LastSupply? {
        try file.load().slots[name.rawValue]?.lastSupply
    }

    public func recordSupply(_ name: SlotName, time: Double, origin: String) throws(VaultError) {
        try file.update { doc in doc.slots[name.rawValue, default: Entry()].lastSupply = LastSupply(time: time, origin: origin) }
    }

    /// Marks the last supply of `name` as not accepted by the program it went to (it asked again).
    public func markLastSupplyRejected(_ name: SlotName) throws(VaultError) {
        guard try file.load().slots[name.rawValue]?.lastSupply != nil else { return }
        try file.update { doc in doc.slots[name.rawValue]?.lastSupply?.rejected = true }
    }

    /// Forgets a slot (when it is deleted).
    public func forget(_ name: SlotName) throws(VaultError) {
        guard try file.load().slots[name.rawValue] != nil else { return }
        try file.update { doc in doc.slots[name.rawValue] = nil }
    }

    /// Forgets a slot's permission and last supply, then runs `delete`; when that fails and `stillHeld()`
    /// says the value may still be there, puts them back.
    ///
    /// Forgotten first, so a delete killed halfway never leaves a permission that a later, new value would
    /// inherit without ever being allowed; put back after a delete that failed, so a failure (the Secret
    /// Service could not be asked, a file could not be removed) never changes what may be supplied.
    public func forgetting<T>(_ name: SlotName, during delete: () throws(VaultError) -> T,
                              stillHeld: () -> Bool) throws(VaultError) -> T {
        let before = try file.load().slots[name.rawValue]
        if before != nil { try file.update { doc in doc.slots[name.rawValue] = nil } }
        do {
            return try delete()
        } catch {
            if let before, stillHeld() {
                try? file.update { doc in
                    if doc.slots[name.rawValue] == nil { doc.slots[name.rawValue] = before }
                }
            }
            throw error
        }
    }
}
