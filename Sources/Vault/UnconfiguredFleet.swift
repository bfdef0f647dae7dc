import Slots

/// The fleet slot where no fleet is configured: every question about it answers that it cannot be asked
/// (`fleetNotConfigured`). `Vault.slot(.fleet)` gives it, so a mode record that names the fleet makes a
/// value "unknown" through the same rule as any slot that could not be asked, never "none" and never
/// another slot's copy. It is never asked otherwise: the slots that count leave the fleet out.
struct UnconfiguredFleet: Slot {
    let mode = SlotMode.fleet
    /// Where the fleet's configuration would be (`fleet.json` beside the mode record), for the message.
    let configuration: String

    private var error: SlotError { .fleetNotConfigured(path: configuration) }

    func holding(_ name: SlotName) -> Holding { .unknown(error) }
    func read(_ name: SlotName) throws(SlotError) -> SecretBytes { throw error }
    func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) { throw error }
    func delete(_ name: SlotName) throws(SlotError) -> Bool { throw error }
    func names() throws(SlotError) -> [SlotName] { throw error }
}
