import TestSupport
import Slots
@testable import GateProtocol
@testable import Vault
@testable import VaultRules

/// A vault over two fake slots, a fake gate and a real mode record in a temporary folder, all sharing one log.
final class VaultFixture {
    let folder = TemporaryFolder()
    let log = OperationLog()
    let device: FakeSlot
    let sync: FakeSlot
    let gate: FakeGate
    let record: ModeRecord
    let vault: Vault

    init() {
        device = FakeSlot(.device, log: log)
        sync = FakeSlot(.sync, log: log)
        gate = FakeGate(log: log)
        record = ModeRecord(folder: folder.appending("config"))
        vault = Vault(device: device, sync: sync, record: record, gate: gate)
        log.watch(record)
    }

    func slot(_ mode: SlotMode) -> FakeSlot { mode == .device ? device : sync }

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
