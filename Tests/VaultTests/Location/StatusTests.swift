import Foundation
import Testing
@testable import Vault
@testable import VaultRules

/// `status`: only what vaultctl can know, never a prompt, and different words for each state.
@Suite struct StatusTests {
    let f = VaultFixture()
    let collectionPlace = "the Secret Service collection 'Login' as item 'vaultctl: api'"

    /// Words that would claim more than vaultctl can know about the sync slot.
    static let overclaims = ["synced", "backed up", "backup"]

    // MARK: in-slot

    @Test func statusOfSyncItemIsInSlotAndNamesTheCollection() throws {
        f.sync.seed(api, "from sync")
        f.sync.placeDescription = collectionPlace

        let status = try f.vault.status(api)

        #expect(status.slot == api)
        #expect(status.state == .inSlot)
        #expect(status.state.rawValue == "in-slot")
        #expect(status.mode == .sync)
        #expect(status.message.contains(collectionPlace))
    }

    @Test func statusOfSyncItemSaysReachingOtherDevicesIsNotConfirmed() throws {
        f.sync.seed(api, "from sync")
        f.sync.placeDescription = collectionPlace

        let message = try f.vault.status(api).message.lowercased()

        #expect(message.contains("other devices"))
        #expect(message.contains("depends on the provider"))
        #expect(message.contains("cannot confirm"))
        for word in Self.overclaims {
            #expect(!message.contains(word), "the in-slot message claims '\(word)'")
        }
    }

    @Test func statusOfSyncItemWithoutLabelSaysSecretService() throws {
        f.sync.seed(api, "from sync")

        let status = try f.vault.status(api)

        #expect(status.state == .inSlot)
        #expect(status.message.contains("the Secret Service"))
    }

    @Test func statusOfValueInBothSlotsIsInSlotAndMentionsTheDeviceCopy() throws {
        f.device.seed(api, "device copy")
        f.sync.seed(api, "sync copy")
        try f.given(api, recordedAs: .sync)

        let status = try f.vault.status(api)

        #expect(status.state == .inSlot)
        #expect(status.mode == .sync)
        #expect(status.message.contains("also in the device slot"))
    }

    @Test func statusOfLockedCollectionIsInSlotWhileReadIsRefusedWithoutTheGate() throws {
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true
        f.sync.placeDescription = collectionPlace
        try f.given(api, recordedAs: .sync)

        let status = try f.vault.status(api)
        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(status.state == .inSlot)
        #expect(status.mode == .sync)
        #expect(status.message.contains(collectionPlace))
        #expect(status.message.contains("locked"))
        #expect(error?.isLocked == true)
        #expect(f.gate.calls == 0)
    }

    // MARK: cannot-leave-device, on-this-device

    @Test func statusOfADeviceValueSealedByTheTPMCannotLeaveDevice() throws {
        f.device.seed(api, "from device")
        f.device.bindingName = "tpm2"
        try f.given(api, recordedAs: .device)

        let status = try f.vault.status(api)

        #expect(status.state == .cannotLeaveDevice)
        #expect(status.state.rawValue == "cannot-leave-device")
        #expect(status.mode == .device)
        #expect(status.message.contains("cannot leave this device"))
    }

    /// Bound to the machine id, a copy of the state folder opens on a machine with the same id: the status
    /// never says "cannot leave this device" for it, and its words say what does hold.
    @Test(arguments: ["machine-id", nil] as [String?])
    func statusOfADeviceValueWithoutTheTPMIsOnThisDevice(binding: String?) throws {
        f.device.seed(api, "from device")
        f.device.bindingName = binding
        try f.given(api, recordedAs: .device)

        let status = try f.vault.status(api)

        #expect(status.state == .onThisDevice)
        #expect(status.state.rawValue == "on-this-device")
        #expect(!status.message.contains("cannot leave this device"), "\(status.message)")
        if binding != nil { #expect(status.message.contains("a deliberate copy")) }
    }

    @Test func statusIgnoresStaleRecord() throws {
        // The record says sync, but the value lives in the device slot.
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .sync)

        let status = try f.vault.status(api)

        #expect(status.state == .onThisDevice)
        #expect(status.mode == .device)
        #expect(f.log.changes.isEmpty, "status must not rewrite the record")
    }

    @Test func statusWhenProviderUnreachableAndValueInDeviceCannotLeaveDevice() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .device)
        f.sync.unavailable = .serviceUnavailable("no Secret Service provider")

        let status = try f.vault.status(api)

        #expect(status.state == .onThisDevice)
        #expect(status.mode == .device)
        #expect(status.message.contains("no Secret Service provider"))
        // It never says "not in the Secret Service" and then that a copy there is not ruled out.
        #expect(!status.message.contains("not in the Secret Service") && status.message.contains("not ruled out"), "\(status.message)")
    }

    @Test func statusSaysNotInTheSecretServiceOnlyWhenItAnsweredSo() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .device)
        let status = try f.vault.status(api)
        #expect(status.message.contains("not in the Secret Service") && !status.message.contains("not ruled out"), "\(status.message)")
    }

    @Test func statusIsUnknownWhenTheRecordedSyncSlotCannotBeAskedAndTheDeviceHoldsAnOlderCopy() throws {
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("no Secret Service provider")

        let status = try f.vault.status(api)

        #expect(status.state == .unknown)
        #expect(status.mode == nil)
        #expect(status.message.contains("no Secret Service provider") && status.message.contains("not served as the value"))
    }

    // MARK: unknown

    @Test func statusWhenProviderUnreachableAndDeviceEmptyIsUnknownNotNone() throws {
        f.sync.unavailable = .serviceUnavailable("the Secret Service did not answer within 5 s")

        let status = try f.vault.status(api)

        #expect(status.state == .unknown)
        #expect(status.state.rawValue == "unknown")
        #expect(status.mode == nil)
        #expect(status.message.contains("the Secret Service did not answer within 5 s"), "it must say why")
        #expect(status.message.contains("may still be in the keyring"))
    }

    @Test func statusIsUnknownEvenWhenRestoredRecordSaysDevice() throws {
        try f.given(api, recordedAs: .device)
        f.sync.unavailable = .serviceUnavailable("no session bus")

        let status = try f.vault.status(api)

        #expect(status.state == .unknown)
        #expect(status.mode == nil)
    }

    @Test func statusWhenDeviceSlotCannotBeLookedAtIsUnknown() throws {
        f.device.unavailable = .unsafePermissions(path: "/state", detail: "its mode 755 lets others in")

        let status = try f.vault.status(api)

        #expect(status.state == .unknown)
        #expect(status.mode == nil)
        #expect(status.message.contains("device slot"))
        #expect(status.message.contains("may still be there"))
    }

    // MARK: none

    @Test func statusOnNewMachineWithRestoredRecordIsNone() throws {
        // The config came back from a backup: the record says device, but this machine's device slot is empty
        // and the keyring holds nothing either.
        try f.given(api, recordedAs: .device)

        let status = try f.vault.status(api)
        let error = #expect(throws: VaultError.self) { try f.vault.read(api) }

        #expect(status.state == .none)
        #expect(status.state.rawValue == "none")
        #expect(status.mode == nil)
        #expect(error?.slotError == .empty(api))
        #expect(f.gate.calls == 0)
    }

    @Test func statusOfNoValueNamesNoLocation() throws {
        try f.given(api, recordedAs: .device)

        let message = try f.vault.status(api).message.lowercased()

        for place in ["device", "secret service", "keyring", "collection", "machine", "sync"] {
            #expect(!message.contains(place), "the none message names '\(place)'")
        }
        #expect(message.contains("api"))
    }

    // MARK: Recorded in a keyring that is not the one running (issue 36, point 6)

    /// The record says sync; the Secret Service answering now (another provider) does not hold it and the
    /// device slot is empty: "none" here, in words that name the provider and say where else it may be.
    @Test func aSyncRecordTheRunningProviderDoesNotHoldNamesTheProviderAndAnotherKeyring() throws {
        try f.given(api, recordedAs: .sync)
        f.sync.providerDescription = "KeePassXC, 'Dana's passwords'"

        let status = try f.vault.status(api)

        #expect(status.state == .none && status.mode == nil && status.recorded == .sync, "\(status)")
        #expect(status.summary == "Slot 'api' is not in the Secret Service running now (KeePassXC, 'Dana's passwords'); recorded as stored in the sync slot — another keyring?")
        #expect(status.notes.contains { $0.contains("'vaultctl store api' here makes a new value") }, "\(status.notes)")
        #expect(status.details.contains { $0.contains("modes.json") }, "\(status.details)")
        #expect(f.log.changes.isEmpty, "status must not rewrite the record")
    }

    /// Without a name for the provider the sentence still stands; a device record that neither slot holds
    /// is the plain "holds no value", and asks nobody for a provider's name.
    @Test func onlyASyncRecordAsksForTheProvidersName() throws {
        try f.given(api, recordedAs: .sync)
        #expect(try f.vault.status(api).summary == "Slot 'api' is not in the Secret Service running now; recorded as stored in the sync slot — another keyring?")

        let device = VaultFixture()
        try device.given(api, recordedAs: .device)
        device.sync.providerDescription = "KeePassXC, 'Dana's passwords'"
        let status = try device.vault.status(api)
        #expect(status.summary == "Slot 'api' holds no value." && status.recorded == .device, "\(status)")
        #expect(!device.log.entries.contains("sync.provider"), "\(device.log.entries)")
    }

    // MARK: Layout: one sentence, then what qualifies it, then what it means (issue 36, point 9)

    @Test(arguments: Scene.allCases)
    func theSummaryIsOneSentenceAndTheMessageIsEverythingInOrder(scene: Scene) throws {
        try arrange(scene)
        f.device.bindingName = "machine-id"

        let status = try f.vault.status(api)

        #expect(!status.summary.isEmpty && !status.summary.contains("\n"), "\(status)")
        #expect(status.summary.hasSuffix(".") || status.summary.hasSuffix("?"), "\(status.summary)")
        #expect(status.message == ([status.summary] + status.notes + status.details).joined(separator: " "))
        for line in status.notes + status.details { #expect(!line.isEmpty && !line.contains("\n"), "\(line)") }
    }

    /// What changes what to do (a lock, a copy not ruled out) is a note, said by default; what a state
    /// means (how far an item travels, what binds a key) is a detail, said with --verbose.
    @Test func locksAndCopiesAreNotesAndMeaningsAreDetails() throws {
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true
        let locked = try f.vault.status(api)
        #expect(locked.notes.contains { $0.contains("locked in the provider") }, "\(locked)")
        #expect(locked.details.contains { $0.contains("depends on the provider") }, "\(locked)")
        #expect(!locked.summary.contains("depends on the provider"))

        let device = VaultFixture()
        device.device.seed(api, "from device")
        device.device.bindingName = "machine-id"
        device.sync.unavailable = .serviceUnavailable("no provider")
        let unsure = try device.vault.status(api)
        #expect(unsure.notes.contains { $0.contains("not ruled out") && $0.contains("no provider") }, "\(unsure)")
        #expect(unsure.details.contains { $0.contains("bound to this machine's id") }, "\(unsure)")
        #expect(unsure.summary == "Slot 'api' is in the device slot on this machine.", "\(unsure.summary)")
    }

    // MARK: What status never does

    /// One set-up per state (and the locked and unreachable variants).
    enum Scene: String, CaseIterable, Sendable {
        case inSync, inLockedSync, inDevice, inDeviceProviderUnreachable, unknown, none
    }

    func arrange(_ scene: Scene) throws {
        switch scene {
        case .inSync:
            f.sync.seed(api, "from sync")
        case .inLockedSync:
            f.sync.seed(api, "from sync")
            f.sync.isLocked = true
        case .inDevice:
            f.device.seed(api, "from device")
        case .inDeviceProviderUnreachable:
            f.device.seed(api, "from device")
            f.sync.unavailable = .serviceUnavailable("no provider")
        case .unknown:
            f.sync.unavailable = .serviceUnavailable("no provider")
        case .none:
            break
        }
        try f.given(api, recordedAs: .device)
    }

    @Test(arguments: Scene.allCases)
    func statusNeverCallsTheGateNeverReadsAndNeverWrites(scene: Scene) throws {
        try arrange(scene)

        _ = try f.vault.status(api)

        #expect(f.gate.calls == 0)
        #expect(!f.log.entries.contains { $0.contains(".read ") })
        #expect(f.log.changes.isEmpty)
    }

    @Test(arguments: Scene.allCases)
    func statusAsksBothSlots(scene: Scene) throws {
        try arrange(scene)

        _ = try f.vault.status(api)

        #expect(f.log.entries.contains("device.holding api"))
        #expect(f.log.entries.contains("sync.holding api"))
    }

    @Test(arguments: Scene.allCases)
    func statusNeverClaimsSyncOrBackup(scene: Scene) throws {
        try arrange(scene)

        let message = try f.vault.status(api).message.lowercased()

        for word in Self.overclaims {
            #expect(!message.contains(word), "the message claims '\(word)'")
        }
    }

    @Test func statusMessagesOfTheFourStatesDifferInWords() throws {
        var messages: [LocationStatus.State: String] = [:]
        for scene in [Scene.inSync, .inDevice, .unknown, .none] {
            let fixture = VaultFixture()
            switch scene {
            case .inSync: fixture.sync.seed(api, "x")
            case .inDevice: fixture.device.seed(api, "x")
            case .unknown: fixture.sync.unavailable = .serviceUnavailable("no provider")
            default: break
            }
            let status = try fixture.vault.status(api)
            messages[status.state] = status.message
        }

        #expect(Set(messages.keys) == [.inSlot, .onThisDevice, .unknown, .none])
        // Not just different names in the same sentence: compare with the slot name taken out.
        let words = messages.values.map { $0.replacingOccurrences(of: "'api'", with: "") }
        #expect(Set(words).count == 4)
    }
}
