import TestSupport
import Slots
@testable import Vault

/// A vault over two fake slots (three with `withFleet`), a fake gate and a real mode record in a temporary
/// folder, all sharing one log.
final class VaultFixture {
    let folder = TemporaryFolder()
    let log = OperationLog()
    let device: FakeSlot
    let sync: FakeSlot
    /// The fleet's fake, which the vault counts only when the fixture was made `withFleet`.
    let fleet: FakeSlot
    let gate: FakeGate
    let record: ModeRecord
    let vault: Vault

    init(withFleet: Bool = false) {
        device = FakeSlot(.device, log: log)
        sync = FakeSlot(.sync, log: log)
        fleet = FakeSlot(.fleet, log: log)
        gate = FakeGate(log: log)
        record = ModeRecord(folder: folder.appending("config"))
        vault = Vault(device: device, sync: sync, fleet: withFleet ? fleet : nil, record: record, gate: gate)
        log.watch(record)
    }

    func slot(_ mode: SlotMode) -> FakeSlot {
        switch mode {
        case .device: return device
        case .sync: return sync
        case .fleet: return fleet
        }
    }

    /// Records `mode` for `name` as set-up, so the log does not show it as a change.
    func given(_ name: SlotName, recordedAs mode: SlotMode) throws {
        try record.set(name, mode)
        log.reset()
    }
}

extension SlotMode {
    var other: SlotMode { self == .device ? .sync : .device }
}

/// The slot names the tests use.
let api = SlotName("api")!

func name(_ raw: String) -> SlotName { SlotName(raw)! }
