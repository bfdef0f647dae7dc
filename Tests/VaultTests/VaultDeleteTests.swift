import Testing
import Slots
@testable import VaultRules

@Suite struct VaultDeleteTests {
    let f = VaultFixture()

    /// The copy reads see (the recorded slot's) goes last, so a delete cut short never leaves an older copy
    /// as the value.
    @Test func deleteRemovesTheCopyReadsDoNotSeeFirst() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "older, in sync")
        try f.given(api, recordedAs: .device)

        try f.vault.delete(api)

        #expect(f.log.changes == ["sync.delete api", "device.delete api", "record api=none"])
    }

    @Test func deleteRemovesBothCopiesAndTheRecord() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: .sync)

        try f.vault.delete(api)

        #expect(f.device.value(of: api) == nil)
        #expect(f.sync.value(of: api) == nil)
        #expect(try f.record.mode(of: api) == nil)
        #expect(f.log.changes == ["device.delete api", "sync.delete api", "record api=none"])
    }

    @Test(arguments: [SlotMode.device, .sync])
    func deleteRemovesTheOneCopyThereIs(mode: SlotMode) throws {
        f.slot(mode).seed(api, "value")
        try f.given(api, recordedAs: mode)

        try f.vault.delete(api)

        #expect(f.slot(mode).value(of: api) == nil)
        #expect(try f.record.mode(of: api) == nil)
    }

    @Test func deleteOfMissingSecretIsEmpty() throws {
        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.slotError == .empty(api))
    }

    @Test func deleteRefusesLockedKeyringBeforeRemovingAnything() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true
        try f.given(api, recordedAs: .sync)

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.isLocked == true)
        #expect(f.device.value(of: api) == "from device")
        #expect(f.sync.value(of: api) == "from sync")
        #expect(try f.record.mode(of: api) == .sync)
        #expect(f.log.changes.isEmpty)
    }

    @Test func deleteSucceedsOnDeviceWhenSyncSlotIsUnreachable() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .device)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let outcome = try f.vault.delete(api)

        #expect(f.device.value(of: api) == nil)
        #expect(try f.record.mode(of: api) == nil)
        // Nobody who never used the sync slot is told about a keyring that could not be asked.
        #expect(outcome.warning == nil, "\(outcome.warning ?? "")")
    }

    @Test func deleteWithTheSyncSlotUnreachableSaysSoToSomeoneWhoUsesIt() throws {
        let other = try #require(SlotName("other"))
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .device)
        try f.given(other, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let outcome = try f.vault.delete(api)

        #expect(outcome.warning?.contains("the Secret Service could not be asked (no session bus)") == true, "\(outcome.warning ?? "")")
        #expect(f.vault.recordNamesSyncSlots())
        try f.given(other, recordedAs: .device)
        #expect(!f.vault.recordNamesSyncSlots())
    }

    @Test func deleteWhenDeviceIsEmptyAndSyncUnreachableCouldNotLook() throws {
        try f.given(api, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        let couldNotLook = try #require(error?.couldNotLook)
        #expect(couldNotLook.name == api)
        #expect(couldNotLook.reason == .serviceUnavailable("no session bus"))
        #expect(try f.record.mode(of: api) == .sync)
    }

    @Test func deleteSurfacesSyncDeleteFailureAndKeepsTheRecord() throws {
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: .sync)
        f.sync.deleteError = .serviceUnavailable("timeout")

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.slotError == .serviceUnavailable("timeout"))
        #expect(try f.record.mode(of: api) == .sync)
    }

    @Test func deleteSurfacesDeviceDeleteFailureBeforeTouchingSync() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: .sync)
        f.device.deleteError = .io(path: "/state/api", errno: 13, operation: "remove")

        let error = #expect(throws: VaultError.self) { try f.vault.delete(api) }

        #expect(error?.slotError == .io(path: "/state/api", errno: 13, operation: "remove"))
        #expect(f.sync.value(of: api) == "from sync")
    }
}
