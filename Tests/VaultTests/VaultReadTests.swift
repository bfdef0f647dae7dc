import Testing
import Slots
@testable import VaultRules

@Suite struct VaultReadTests {
    let f = VaultFixture()

    // MARK: Where the value is found

    @Test func readUsesRecordedSyncSlotFirst() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: .sync)

        let secret = try f.vault.read(api)

        #expect(secret.text == "from sync")
        #expect(f.log.entries == ["sync.holdingBeforeRead api", "gate.verify", "sync.read api"])
    }

    @Test func readIgnoresStaleRecord() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .sync)

        let secret = try f.vault.read(api)

        #expect(secret.text == "from device")
        #expect(f.log.entries == ["sync.holdingBeforeRead api", "device.holdingBeforeRead api", "gate.verify", "device.read api"])
    }

    /// Without a record the device slot is looked in first, then the sync slot: the value is read from
    /// whichever holds it. Even with a copy in the device slot the sync slot is asked too: a copy there
    /// would make it ambiguous.
    @Test(arguments: SlotMode.offered)
    func readWithoutRecordLooksInDeviceSlotFirstThenSync(_ mode: SlotMode) throws {
        f.slot(mode).seed(api, "from \(mode.rawValue)")

        let secret = try f.vault.read(api)

        #expect(secret.text == "from \(mode.rawValue)")
        #expect(f.log.entries == ["device.holdingBeforeRead api", "sync.holdingBeforeRead api", "gate.verify", "\(mode.rawValue).read api"])
    }

    @Test func readWithoutRecordAndACopyInEachSlotIsRefusedBeforeThePrompt() throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        guard case .configuration(let path, let detail)? = error else {
            Issue.record("expected a configuration error, got \(String(describing: error))")
            return
        }
        #expect(path.hasSuffix("modes.json") && detail.contains("both slots"))
        #expect(f.gate.calls == 0)
    }

    @Test func readOfARecordedSyncSlotThatCannotBeAskedIsCouldNotLookNeverTheDeviceCopy() throws {
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("timeout")

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        guard case .couldNotLook(let name, _)? = error else {
            Issue.record("expected couldNotLook, got \(String(describing: error))")
            return
        }
        #expect(name == api)
        #expect(f.gate.calls == 0)
        #expect(!f.log.entries.contains("device.read api"))
    }

    @Test func locateReportsLockedCollection() throws {
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true

        let found = try f.vault.locate(api)

        #expect(found.mode == .sync)
        #expect(found.locked)
    }

    // MARK: Nothing to read

    @Test func readOfMissingSecretIsEmptyAndNeverAsksForPresence() throws {
        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(error?.slotError == .empty(api))
        #expect(f.gate.calls == 0)
    }

    @Test func readWhenDeviceIsEmptyAndSyncUnreachableCouldNotLookRatherThanEmpty() throws {
        f.sync.unavailable = .serviceUnavailable("no provider")

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        let couldNotLook = try #require(error?.couldNotLook)
        #expect(couldNotLook.name == api)
        #expect(couldNotLook.reason == .serviceUnavailable("no provider"))
        #expect(f.gate.calls == 0)
    }

    @Test func locateReportsUnsafeDeviceSlotWhenNoSlotHoldsTheValue() throws {
        f.device.unavailable = .unsafePermissions(path: "/state", detail: "its mode 755 lets others in")

        let error = #expect(throws: VaultError.self) { try f.vault.locate(api) }

        #expect(error?.slotError == .unsafePermissions(path: "/state", detail: "its mode 755 lets others in"))
    }

    @Test func locateReportsTheDeviceSlotErrorEvenWhenTheSyncSlotHoldsACopy() throws {
        f.device.unavailable = .unsafePermissions(path: "/state", detail: "its mode 755 lets others in")
        f.sync.seed(api, "older sync copy")

        let error = #expect(throws: VaultError.self) { try f.vault.locate(api) }

        #expect(error?.slotError == .unsafePermissions(path: "/state", detail: "its mode 755 lets others in"))
    }

    // MARK: The presence gate

    @Test func readOfLockedItemRefusesBeforeAskingForPresence() throws {
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true
        try f.given(api, recordedAs: .sync)

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(error?.isLocked == true)
        #expect(f.gate.calls == 0)
        #expect(!f.log.entries.contains("sync.read api"))
    }

    @Test func readAsksForPresenceExactlyOnce() throws {
        f.device.seed(api, "from device")

        _ = try f.vault.read(api)

        #expect(f.gate.calls == 1)
        #expect(f.gate.reasons == ["read slot 'api'"])
    }

    @Test func readThatFailsPresenceNeverReadsTheSlot() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .device)
        f.gate.passes = false

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(error?.isAuthenticationFailed == true)
        #expect(f.gate.calls == 1)
        #expect(f.log.entries == ["device.holdingBeforeRead api", "gate.verify failed"])
    }

    @Test func readSurfacesSlotReadFailureAsSlotError() throws {
        f.device.seed(api, "from device")
        f.device.readError = .tampered(path: "/state/api", detail: "it fails to authenticate")

        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(error?.slotError == .tampered(path: "/state/api", detail: "it fails to authenticate"))
    }
}
