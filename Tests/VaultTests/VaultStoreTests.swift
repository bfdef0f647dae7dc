import Testing
import Slots
@testable import VaultRules

@Suite struct VaultStoreTests {
    let f = VaultFixture()

    @Test("store writes the target slot, then records it, then removes the other copy", arguments: [SlotMode.device, .sync])
    func storeWritesThenRecordsThenRemovesOldCopy(mode: SlotMode) throws {
        f.slot(mode.other).seed(api, "old")
        try f.given(api, recordedAs: mode.other)

        let outcome = try f.vault.store(api, .text("new"), mode: mode)

        #expect(f.log.changes == [
            "\(mode.rawValue).write api",
            "record api=\(mode.rawValue)",
            "\(mode.other.rawValue).delete api",
        ])
        #expect(f.slot(mode).value(of: api) == "new")
        #expect(f.slot(mode.other).value(of: api) == nil)
        #expect(try f.record.mode(of: api) == mode)
        #expect(outcome.warning == nil)
    }

    @Test func storeReplacesValueInSameSlotWithoutTouchingOther() throws {
        f.device.seed(api, "old")
        try f.given(api, recordedAs: .device)

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(f.device.value(of: api) == "new")
        #expect(f.log.changes == ["device.write api"])
        #expect(outcome.warning == nil)
    }

    @Test func storeThatFailsToWriteLeavesRecordAndOtherSlotAlone() throws {
        f.device.seed(api, "old")
        try f.given(api, recordedAs: .device)
        f.sync.writeError = .serviceUnavailable("no provider")

        let error = #expect(throws: VaultError.self) {
            try f.vault.store(api, .text("new"), mode: .sync)
        }

        #expect(error?.slotError == .serviceUnavailable("no provider"))
        #expect(f.log.changes == ["sync.write api failed"])
        #expect(try f.record.mode(of: api) == .device)
        #expect(f.device.value(of: api) == "old")
        #expect(f.sync.value(of: api) == nil)
    }

    @Test("store refuses an empty or oversized secret and writes nothing",
          arguments: [0, SecretBytes.maximumCount + 1])
    func storeRefusesBadSecretSize(count: Int) throws {
        let error = #expect(throws: VaultError.self) {
            try f.vault.store(api, .random(count: count), mode: .device)
        }

        #expect(error?.slotError == .badSecretSize(count))
        #expect(f.log.entries.isEmpty)
        #expect(try f.record.load().isEmpty)
    }

    @Test func storeAcceptsSecretOfExactlyMaximumSize() throws {
        let secret = SecretBytes.random(count: SecretBytes.maximumCount)

        _ = try f.vault.store(api, secret, mode: .device)

        #expect(f.device.value(of: api) != nil)
        #expect(try f.record.mode(of: api) == .device)
    }

    @Test func storeSucceedsWithWarningWhenOldCopyCannotBeRemoved() throws {
        f.device.seed(api, "old")
        try f.given(api, recordedAs: .device)
        f.device.deleteError = .io(path: "/state/api", errno: 13, operation: "remove")

        let outcome = try f.vault.store(api, .text("new"), mode: .sync)

        #expect(f.sync.value(of: api) == "new")
        #expect(try f.record.mode(of: api) == .sync)
        let warning = try #require(outcome.warning)
        #expect(warning.contains("device slot is still there"))
    }

    @Test func storeWarnsWhenOldCopySitsInLockedKeyring() throws {
        f.sync.seed(api, "old")
        f.sync.isLocked = true

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(f.device.value(of: api) == "new")
        #expect(f.sync.value(of: api) == "old")
        #expect(outcome.warning?.contains("sync slot") == true)
    }

    @Test func storeSaysNothingWhenUnreachableSyncSlotNeverHadTheSecret() throws {
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(outcome.warning == nil)
        #expect(f.device.value(of: api) == "new")
        #expect(try f.record.mode(of: api) == .device)
    }

    @Test func storeSaysNothingWhenUnreachableSyncSlotWasNotTheRecordedOne() throws {
        f.device.seed(api, "old")
        try f.given(api, recordedAs: .device)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(outcome.warning == nil)
    }

    @Test func storeWarnsWhenUnreachableSlotWasTheRecordedOne() throws {
        try f.given(api, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let outcome = try f.vault.store(api, .text("new"), mode: .device)

        #expect(f.device.value(of: api) == "new")
        #expect(try f.record.mode(of: api) == .device)
        let warning = try #require(outcome.warning)
        #expect(warning.contains("could not check the sync slot"))
        #expect(warning.contains("no session bus"))
    }

    // MARK: A sync record the running provider does not hold (issue 36, point 6)

    /// A store into either slot of a name recorded as sync that the running Secret Service does not hold says
    /// so (one line: a new value; a copy in another keyring stays there), and stores.
    @Test(arguments: [SlotMode.device, .sync])
    func storeOfASyncRecordTheRunningProviderDoesNotHoldSaysSo(mode: SlotMode) throws {
        try f.given(api, recordedAs: .sync)
        f.sync.providerDescription = "KeePassXC, 'Passwords'"

        // Into the sync slot, nothing is replaced (the store was let through as a first one); into the device
        // slot, the record names the other slot, so it is asked for as a replacement.
        let outcome = try f.vault.store(api, .text("new"), mode: mode, expectingEmpty: mode == .sync)

        #expect(f.slot(mode).value(of: api) == "new")
        #expect(try f.record.mode(of: api) == mode)
        let note = try #require(outcome.recordedElsewhere)
        #expect(note == "slot 'api' is not in the Secret Service running now (KeePassXC, 'Passwords'); recorded as stored in the sync slot — another keyring? This is a new value; a copy in another keyring, if any, stays there")
        #expect(outcome.warning == nil)
    }

    /// No record, a device record, or a sync value the provider holds: nothing of the kind is said.
    @Test func storeSaysNothingOfAnotherKeyringWhenTheRecordDoesNotNameAMissingSyncValue() throws {
        #expect(try f.vault.store(api, .text("first"), mode: .sync, expectingEmpty: true).recordedElsewhere == nil)
        #expect(try f.vault.store(api, .text("over"), mode: .sync).recordedElsewhere == nil, "the provider holds it")
        let other = VaultFixture()
        try other.given(api, recordedAs: .device)
        #expect(try other.vault.store(api, .text("new"), mode: .device, expectingEmpty: true).recordedElsewhere == nil)
        #expect(!other.log.entries.contains("sync.provider"))
    }
}
