import Testing
import Slots
@testable import GateProtocol
@testable import Vault
@testable import VaultRules

/// store, move and delete over three slots (issue 35, step F2): what they did with "the other slot" they
/// now do with each of the others, with a fake fleet standing in for the backend that is not built yet.
@Suite struct VaultFleetSlotTests {
    let f = VaultFixture(withFleet: true)

    // MARK: store

    @Test func storeRemovesTheOldCopiesFromBothOtherSlots() throws {
        f.sync.seed(api, "old, in sync")
        f.fleet.seed(api, "old, in the fleet")
        try f.given(api, recordedAs: .fleet)

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(outcome.warning == nil)
        #expect(f.log.changes == ["device.write api", "record api=device", "sync.delete api", "fleet.delete api"])
        #expect(f.device.value(of: api) == "new")
        #expect(f.sync.value(of: api) == nil)
        #expect(f.fleet.value(of: api) == nil)
    }

    @Test func storeIntoTheFleetRemovesTheDeviceCopy() throws {
        f.device.seed(api, "old")
        try f.given(api, recordedAs: .device)

        _ = try f.vault.store(api, .text("new"), mode: .fleet)

        #expect(f.log.entries == ["fleet.write api", "record api=fleet", "device.holding api", "device.delete api", "sync.holding api"])
        #expect(f.fleet.value(of: api) == "new")
    }

    @Test func storeSaysTheRecordedFleetCouldNotBeChecked() throws {
        try f.given(api, recordedAs: .fleet)
        f.fleet.unavailable = .serviceUnavailable("no node answered")

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(outcome.warning?.contains("could not check the fleet for the old copy") == true)
    }

    // MARK: move

    @Test func moveToTheFleetWritesVerifiesRecordsThenDeletesSource() throws {
        f.device.seed(api, "the secret")
        try f.given(api, recordedAs: .device)

        #expect(try f.vault.move(api, to: .fleet) == .moved(from: .device))

        #expect(f.log.changes == ["fleet.write api", "record api=fleet", "device.delete api"])
        #expect(f.fleet.value(of: api) == "the secret")
        #expect(f.device.value(of: api) == nil)
    }

    @Test func moveOutOfTheFleetLeavesNoCopyThere() throws {
        f.fleet.seed(api, "the secret")
        try f.given(api, recordedAs: .fleet)

        #expect(try f.vault.move(api, to: .sync) == .moved(from: .fleet))

        #expect(f.log.changes == ["sync.write api", "record api=sync", "fleet.delete api"])
        #expect(f.fleet.value(of: api) == nil)
    }

    @Test func aValueAlreadyThereHasItsCopiesInEveryOtherSlotRemoved() throws {
        f.device.seed(api, "the secret")
        f.sync.seed(api, "left in sync")
        f.fleet.seed(api, "the secret")
        try f.given(api, recordedAs: .device)

        let outcome = try f.vault.move(api, to: .device)

        #expect(outcome == .alreadyThere(removedCopy: true, differed: true))
        #expect(f.gate.reasons == [PromptReason.removeLeftCopy(api, in: .sync).text])
        #expect(f.log.changes == ["sync.delete api", "fleet.delete api"])
        #expect(f.device.value(of: api) == "the secret")
    }

    // MARK: delete

    @Test func deleteRemovesTheCopyReadsSeeLast() throws {
        f.device.seed(api, "older, in the device slot")
        f.sync.seed(api, "older, in sync")
        f.fleet.seed(api, "the value")
        try f.given(api, recordedAs: .fleet)

        try f.vault.delete(api)

        // Reads look in the fleet (recorded), then device, then sync: the removal runs the other way.
        #expect(f.log.changes == ["sync.delete api", "device.delete api", "fleet.delete api", "record api=none"])
    }

    @Test func deleteWithoutARecordRemovesTheFleetCopyFirst() throws {
        f.device.seed(api, "a")
        f.fleet.seed(api, "b")

        try f.vault.delete(api)

        #expect(f.log.changes == ["fleet.delete api", "device.delete api"])
    }

    @Test func deleteSaysAFleetThatCouldNotBeAskedMayStillHoldACopy() throws {
        f.device.seed(api, "a")
        try f.given(api, recordedAs: .fleet)
        f.fleet.unavailable = .serviceUnavailable("no node answered")

        let outcome = try f.vault.delete(api)

        #expect(outcome.warning == "the device copy is deleted, but the fleet could not be asked (no node answered); a copy there, if any, is still there")
        #expect(try f.record.mode(of: api) == nil)
    }

    @Test func deleteRemovingNothingWhileTheFleetCouldNotBeAskedIsItsError() throws {
        try f.given(api, recordedAs: .fleet)
        f.fleet.unavailable = .serviceUnavailable("no node answered")

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.slotError == .serviceUnavailable("no node answered"))
        #expect(try f.record.mode(of: api) == .fleet)
    }
}

/// A mode record that names the fleet where no fleet is configured: "unknown", never "none", never another
/// slot's copy.
@Suite struct UnconfiguredFleetTests {
    let f = VaultFixture()

    var notConfigured: SlotError { .fleetNotConfigured(path: f.vault.fleetConfiguration) }

    @Test func theFleetsConfigurationIsBesideTheRecord() {
        #expect(f.vault.fleetConfiguration == f.folder.appending("config") + "/fleet.json")
        #expect(f.vault.modes == [.device, .sync])
    }

    @Test func aValueRecordedInTheFleetIsUnknownAndNoOtherSlotIsAsked() throws {
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .fleet)

        #expect(try f.vault.loadMode(api) == .unknown(notConfigured))
        #expect(f.log.entries.isEmpty)
    }

    @Test func readIsTheConfigurationError() throws {
        f.sync.seed(api, "older sync copy")
        try f.given(api, recordedAs: .fleet)

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(error?.slotError == notConfigured)
        #expect(f.gate.calls == 0)
    }

    @Test func statusIsUnknownAndSaysWhy() throws {
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .fleet)

        let status = try f.vault.status(api)

        #expect(status.state == .unknown)
        #expect(status.mode == nil)
        #expect(status.recorded == .fleet)
        #expect(status.summary.contains("Could not ask the fleet about 'api'"))
        #expect(status.summary.contains("no fleet is configured on this machine"))
        #expect(status.notes == ["A copy is in the device slot, but it is not served as the value while the fleet cannot be asked."])
    }

    @Test func storeElsewhereSaysTheFleetCopyCouldNotBeChecked() throws {
        try f.given(api, recordedAs: .fleet)

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(outcome.warning == "could not check the fleet for the old copy: \(VaultError.reason(notConfigured))")
        #expect(try f.record.mode(of: api) == .device)
    }

    @Test func deleteRemovesWhatItCanAndSaysTheFleetWasNotAsked() throws {
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .fleet)

        let outcome = try f.vault.delete(api)

        #expect(outcome.warning?.hasPrefix("the device copy is deleted, but the fleet could not be asked (The mode record says this value is in the fleet") == true)
        #expect(f.device.value(of: api) == nil)
    }

    @Test func deleteOfNothingElseIsTheConfigurationError() throws {
        try f.given(api, recordedAs: .fleet)

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.slotError == notConfigured)
        #expect(try f.record.mode(of: api) == .fleet)
    }

    @Test func storeIntoTheFleetIsTheConfigurationError() throws {
        let error = #expect(throws: VaultError.self) { try f.vault.store(api, .text("x"), mode: .fleet) }

        #expect(error?.slotError == notConfigured)
        #expect(f.log.changes.isEmpty)
    }
}
