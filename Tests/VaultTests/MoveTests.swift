import Testing
import Slots
@testable import VaultRules

/// `move`: write the target, read it back, record, then delete the source, so a value is never lost.
@Suite struct MoveTests {
    let f = VaultFixture()

    // MARK: The order

    @Test(arguments: SlotMode.offered)
    func moveWritesVerifiesRecordsThenDeletesSource(from source: SlotMode) throws {
        let (from, to) = (source.rawValue, source.other.rawValue)
        f.slot(source).seed(api, "the secret")
        try f.given(api, recordedAs: source)

        let outcome = try f.vault.move(api, to: source.other)

        #expect(outcome == .moved(from: source))
        #expect(f.log.entries == [
            "\(from).holding api",
            "gate.verify",
            "\(from).holding api",  // looked up again under the change lock
            "\(from).read api",
            "\(to).write api",
            "\(to).read api",
            "record api=\(to)",
            "\(from).delete api",
        ])
        #expect(f.slot(source.other).value(of: api) == "the secret")
        #expect(f.slot(source).value(of: api) == nil)
    }

    @Test func moveFindsTheValueDespiteStaleRecord() throws {
        // The record (restored from a backup) says device; the value is in the keyring.
        f.sync.seed(api, "the secret")
        try f.given(api, recordedAs: .device)

        let outcome = try f.vault.move(api, to: .device)

        #expect(outcome == .moved(from: .sync))
        #expect(f.device.value(of: api) == "the secret")
        #expect(f.sync.value(of: api) == nil)
        #expect(try f.record.mode(of: api) == .device)
    }

    @Test func moveAsksThePresenceGateWithAReason() throws {
        f.device.seed(api, "the secret")

        _ = try f.vault.move(api, to: .sync)

        #expect(f.gate.reasons == ["move slot 'api' to the sync slot"])
    }

    // MARK: Failures keep the source

    /// A target slot that refuses the write: it fails, or its collection is locked.
    enum RefusedWrite: Sendable, CaseIterable {
        case fails, locked
    }

    @Test(arguments: RefusedWrite.allCases)
    func moveWhenTargetRefusesTheWriteKeepsSourceAndRecord(_ refusal: RefusedWrite) throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        switch refusal {
        case .fails: f.sync.writeError = .serviceUnavailable("no provider")
        case .locked: f.sync.isLocked = true
        }

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        switch refusal {
        case .fails: #expect(error?.slotError == .serviceUnavailable("no provider"))
        case .locked: #expect(error?.isLocked == true)
        }
        #expect(f.device.value(of: api) == "the secret")
        #expect(try f.record.mode(of: api) == .device)
        #expect(f.log.changes == ["sync.write api failed"])
    }

    @Test func moveWhenReadBackDiffersKeepsSourceAndFails() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        f.sync.garblesReads = true

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        guard case .tampered(_, let detail)? = error?.slotError else {
            Issue.record("expected a tampered error, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("source was kept"))
        #expect(f.device.value(of: api) == "the secret")
        #expect(try f.record.mode(of: api) == .device)
        #expect(f.log.changes == ["sync.write api", "sync.delete api"],
                "no record change, and the unverified copy removed, after a bad read-back")
        #expect(f.log.entries.suffix(3) == ["sync.write api", "sync.read api", "sync.delete api"])
    }

    @Test func moveWhenReadBackFailsKeepsSourceAndRecord() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        f.sync.readError = .serviceUnavailable("the Secret Service did not answer within 5 s")

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        #expect(error?.slotError == .serviceUnavailable("the Secret Service did not answer within 5 s"))
        #expect(f.device.value(of: api) == "the secret")
        #expect(try f.record.mode(of: api) == .device)
        #expect(!f.log.changes.contains("device.delete api"))
    }

    @Test func moveAfterBadReadBackStillReadsTheSourceValue() throws {
        // The new-machine case: the restored record says device, the value came in through the keyring.
        f.sync.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        f.device.garblesReads = true
        _ = #expect(throws: VaultError.self) { try f.vault.move(api, to: .device) }

        // "The source was kept" means the source is still what a read finds: the unverified copy is removed
        // and the record names the source.
        #expect(try f.vault.loadMode(api) == .mode(.sync, locked: false))
        #expect(f.device.value(of: api) == nil)
    }

    @Test func moveWhenSourceDeleteFailsLeavesTheValueInBothSlotsAndRecordsTheTarget() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        f.device.deleteError = .io(path: "/state/api", errno: 13, operation: "remove")

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        #expect(error?.slotError == .io(path: "/state/api", errno: 13, operation: "remove"))
        #expect(f.sync.value(of: api) == "the secret")
        #expect(f.device.value(of: api) == "the secret")
        #expect(try f.record.mode(of: api) == .sync)
    }

    // MARK: Already there

    @Test(arguments: [SlotMode.device, .sync])
    func moveToSlotThatHoldsTheValueIsAlreadyThereWithoutTheGate(target: SlotMode) throws {
        f.slot(target).seed(api, "the secret")
        try f.given(api, recordedAs: target)

        let outcome = try f.vault.move(api, to: target)

        #expect(outcome == .alreadyThere(removedCopy: false, differed: nil))
        #expect(f.gate.calls == 0)
        #expect(f.log.changes.isEmpty)
        #expect(!f.log.entries.contains { $0.contains(".read ") })
        #expect(f.slot(target).value(of: api) == "the secret")
    }

    @Test func moveAlreadyThereBringsStaleRecordUpToDateAfterTheGate() throws {
        // Pointing the record at another slot changes which copy reads serve: a move, asked for as one.
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .sync)

        let outcome = try f.vault.move(api, to: .device)

        #expect(outcome == .alreadyThere(removedCopy: false, differed: nil))
        #expect(f.gate.reasons == ["move slot 'api' to the device slot"])
        #expect(f.log.changes == ["record api=device"])
    }

    @Test func moveAlreadyThereLeavesTheRecordWhenTheGateRefuses() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .sync)
        f.gate.passes = false

        #expect(throws: VaultError.self) { try f.vault.move(api, to: .device) }
        #expect(f.log.changes.isEmpty)
        #expect(try f.record.mode(of: api) == .sync)
    }

    @Test func moveAlreadyThereRemovesALeftoverCopyFromTheOtherSlotAfterTheGate() throws {
        f.device.seed(api, "the secret")
        f.sync.seed(api, "the secret")
        try f.given(api, recordedAs: .device)

        let outcome = try f.vault.move(api, to: .device)

        #expect(outcome == .alreadyThere(removedCopy: true, differed: false))
        #expect(f.sync.value(of: api) == nil)
        #expect(f.device.value(of: api) == "the secret")
        #expect(f.gate.reasons == ["remove the copy of slot 'api' left in the sync slot"])
    }

    @Test func moveAlreadyThereSaysWhenTheLeftoverHeldAnotherValue() throws {
        f.sync.seed(api, "the secret")
        f.device.seed(api, "another value")
        try f.given(api, recordedAs: .sync)

        let outcome = try f.vault.move(api, to: .sync)

        #expect(outcome == .alreadyThere(removedCopy: true, differed: true))
        #expect(f.device.value(of: api) == nil)
        #expect(f.sync.value(of: api) == "the secret")
    }

    @Test func moveAlreadyThereKeepsALeftoverCopyWhenTheGateRefuses() throws {
        f.sync.seed(api, "the secret")
        f.device.seed(api, "another value")
        try f.given(api, recordedAs: .sync)
        f.gate.passes = false

        #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }
        #expect(f.device.value(of: api) == "another value")
    }

    @Test func moveAlreadyThereRecordsTheSlotWhenThereWasNoRecord() throws {
        f.sync.seed(api, "the secret")

        let outcome = try f.vault.move(api, to: .sync)

        #expect(outcome == .alreadyThere(removedCopy: false, differed: nil))
        #expect(try f.record.mode(of: api) == .sync)
        #expect(f.gate.calls == 1, "writing a record entry is pointing it at a slot")
    }

    // MARK: Refused before anything is read or written

    @Test func moveWhenGateRefusesWritesNothing() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)
        f.gate.passes = false

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        #expect(error?.isAuthenticationFailed == true)
        #expect(f.log.changes.isEmpty)
        #expect(!f.log.entries.contains { $0.contains(".read ") })
        #expect(f.device.value(of: api) == "the secret")
        #expect(f.sync.value(of: api) == nil)
    }

    @Test func moveOfLockedSourceIsRefusedBeforeTheGate() throws {
        f.sync.seed(api, "the secret")
        f.sync.isLocked = true
        try f.given(api, recordedAs: .sync)

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .device) }

        #expect(error?.isLocked == true)
        #expect(f.gate.calls == 0)
        #expect(f.log.changes.isEmpty)
        #expect(f.sync.value(of: api) == "the secret")
    }

    @Test func moveOfMissingValueIsEmptyWithoutTheGate() throws {
        try f.given(api, recordedAs: .device)

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        #expect(error?.slotError == .empty(api))
        #expect(f.gate.calls == 0)
        #expect(f.log.changes.isEmpty)
    }

    @Test func moveWhenSyncCannotBeAskedAndDeviceIsEmptyCouldNotLook() throws {
        f.sync.unavailable = .serviceUnavailable("no provider")

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .device) }

        #expect(error?.couldNotLook?.reason == .serviceUnavailable("no provider"))
        #expect(f.gate.calls == 0)
        #expect(f.log.changes.isEmpty)
    }

    @Test func moveWithUnreadableRecordWritesNothing() throws {
        let config = f.folder.appending("config")
        try SecureFile.ensurePrivateFolder(config)
        try SecureFile.write("\(config)/modes.json", Array("not json".utf8))
        f.device.seed(api, "the secret")

        let error = #expect(throws: VaultError.self) { try f.vault.move(api, to: .sync) }

        #expect(error?.configurationPath == "\(config)/modes.json")
        #expect(f.gate.calls == 0)
        #expect(f.log.entries.isEmpty)
    }
}
