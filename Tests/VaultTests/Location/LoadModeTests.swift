import Testing
import Slots
@testable import Vault

/// `loadMode`: the record is a hint, the slots are the truth, and a failed check is never "empty".
@Suite struct LoadModeTests {
    let f = VaultFixture()

    // MARK: The record is trusted only when its slot holds the value

    @Test(arguments: [SlotMode.device, .sync])
    func loadModeTrustsRecordedSlotThatHoldsTheValue(recorded: SlotMode) throws {
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: recorded)

        #expect(try f.vault.loadMode(api) == .mode(recorded, locked: false))
        #expect(f.log.entries == ["\(recorded.rawValue).holding api"])
    }

    @Test func loadModeIgnoresStaleSyncRecordWhenValueIsInDeviceSlot() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .sync)

        #expect(try f.vault.loadMode(api) == .mode(.device, locked: false))
        #expect(f.log.entries == ["sync.holding api", "device.holding api"])
    }

    @Test func loadModeIgnoresRestoredDeviceRecordWhenValueIsInSyncSlot() throws {
        f.sync.seed(api, "from sync")
        try f.given(api, recordedAs: .device)

        #expect(try f.vault.loadMode(api) == .mode(.sync, locked: false))
        #expect(f.log.entries == ["device.holding api", "sync.holding api"])
    }

    @Test func loadModeWithoutRecordAsksDeviceSlotFirst() throws {
        f.device.seed(api, "from device")

        #expect(try f.vault.loadMode(api) == .mode(.device, locked: false))
        #expect(f.log.entries == ["device.holding api", "sync.holding api"])
    }

    @Test func loadModeWithoutRecordAndACopyInEachSlotIsConflicting() throws {
        // Nothing says which copy is the value (a store cut short, then the record lost): neither is served.
        f.device.seed(api, "from device")
        f.sync.seed(api, "from sync")

        guard case .conflicting(_, let detail) = try f.vault.loadMode(api) else {
            Issue.record("expected conflicting")
            return
        }
        #expect(detail.contains("no entry"))
    }

    @Test func loadModeWithAnUnreadableRecordAndACopyInEachSlotIsConflicting() throws {
        f.device.seed(api, "older device copy")
        f.sync.seed(api, "from sync")
        let config = f.folder.appending("config")
        try SecureFile.ensurePrivateFolder(config)
        try SecureFile.write("\(config)/modes.json", Array("not json".utf8))

        guard case .conflicting(let path, _) = try f.vault.loadMode(api) else {
            Issue.record("expected conflicting")
            return
        }
        #expect(path.hasSuffix("/modes.json"))
    }

    @Test func loadModeWithAnUnreadableRecordAndAnUnaskedSyncSlotServesNoDeviceCopy() throws {
        // The Secret Service may hold a newer copy, and the record that would say so cannot be read.
        f.device.seed(api, "device copy")
        f.sync.unavailable = .serviceUnavailable("no bus")
        let config = f.folder.appending("config")
        try SecureFile.ensurePrivateFolder(config)
        try SecureFile.write("\(config)/modes.json", Array("not json".utf8))

        guard case .conflicting(_, let detail) = try f.vault.loadMode(api) else {
            Issue.record("expected conflicting")
            return
        }
        #expect(detail.contains("could not be asked (no bus)"))
    }

    @Test func loadModeWithAnUnreadableRecordIsUnknownWhenNoSlotHoldsACopyAndOneCannotBeAsked() throws {
        f.sync.unavailable = .serviceUnavailable("no bus")
        let config = f.folder.appending("config")
        try SecureFile.ensurePrivateFolder(config)
        try SecureFile.write("\(config)/modes.json", Array("not json".utf8))

        #expect(try f.vault.loadMode(api) == .unknown(.serviceUnavailable("no bus")))
    }

    @Test func loadModeNeverChangesTheRecord() throws {
        f.device.seed(api, "from device")
        try f.given(api, recordedAs: .sync)

        _ = try f.vault.loadMode(api)

        #expect(f.log.changes.isEmpty)
        #expect(try f.record.mode(of: api) == .sync)
    }

    // MARK: Nothing, or "could not look"

    @Test(arguments: [nil, SlotMode.device, SlotMode.sync])
    func loadModeIsNoneWhenBothSlotsAreAskedAndEmpty(recorded: SlotMode?) throws {
        if let recorded { try f.given(api, recordedAs: recorded) }

        #expect(try f.vault.loadMode(api) == LoadMode.none)
        #expect(Set(f.log.entries) == ["device.holding api", "sync.holding api"])
    }

    /// Each way the Secret Service can fail to answer; none of them may be read as "empty".
    static let syncFailures: [SlotError] = [
        .serviceUnavailable("no session bus"),
        .serviceUnavailable("no Secret Service provider"),
        .serviceUnavailable("the Secret Service did not answer within 5 s"),
        .serviceUnavailable("org.freedesktop.DBus.Error.Failed: something broke"),
    ]

    @Test(arguments: syncFailures)
    func loadModeIsUnknownNotNoneWhenSyncCannotBeAskedAndDeviceIsEmpty(failure: SlotError) throws {
        f.sync.unavailable = failure

        #expect(try f.vault.loadMode(api) == .unknown(failure))
    }

    @Test func loadModeIsUnknownEvenWhenRecordSaysDevice() throws {
        // A restored record says device, the device slot is empty, the keyring cannot be asked.
        try f.given(api, recordedAs: .device)
        f.sync.unavailable = .serviceUnavailable("no provider")

        #expect(try f.vault.loadMode(api) == .unknown(.serviceUnavailable("no provider")))
    }

    @Test func loadModeNeverServesTheDeviceCopyWhenTheRecordedSyncSlotCannotBeAsked() throws {
        // The record says sync: the device copy may be an older one a store had not yet removed.
        f.device.seed(api, "older device copy")
        try f.given(api, recordedAs: .sync)
        f.sync.unavailable = .serviceUnavailable("timeout")

        #expect(try f.vault.loadMode(api) == .unknown(.serviceUnavailable("timeout")))
        #expect(f.log.entries == ["sync.holding api"])
    }

    @Test(arguments: [nil, SlotMode.device])
    func loadModeNeverServesTheSyncCopyWhenTheDeviceSlotCannotBeLookedAt(recorded: SlotMode?) throws {
        // A device slot that cannot be looked at safely is an error in itself, not a reason to use another copy.
        if let recorded { try f.given(api, recordedAs: recorded) }
        let failure = SlotError.unsafePermissions(path: "/state", detail: "its mode 755 lets others in")
        f.device.unavailable = failure
        f.sync.seed(api, "older sync copy")

        #expect(try f.vault.loadMode(api) == .unknown(failure))
    }

    @Test func loadModeIsUnknownWhenDeviceSlotCannotBeLookedAtAndSyncIsEmpty() throws {
        let failure = SlotError.unsafePermissions(path: "/state", detail: "its mode 755 lets others in")
        f.device.unavailable = failure

        #expect(try f.vault.loadMode(api) == .unknown(failure))
    }

    @Test(arguments: [nil, SlotMode.device])
    func loadModeReportsTheDeviceSlotFailureWhenNeitherSlotCanBeAsked(recorded: SlotMode?) throws {
        // What is wrong on this machine says more than "the Secret Service did not answer".
        if let recorded { try f.given(api, recordedAs: recorded) }
        f.device.unavailable = .io(path: "/state", errno: 5, operation: "list")
        f.sync.unavailable = .serviceUnavailable("no bus")

        #expect(try f.vault.loadMode(api) == .unknown(.io(path: "/state", errno: 5, operation: "list")))
    }

    @Test func loadModeReportsTheRecordedSyncSlotFailureWithoutAskingTheDeviceSlot() throws {
        try f.given(api, recordedAs: .sync)
        f.device.unavailable = .io(path: "/state", errno: 5, operation: "list")
        f.sync.unavailable = .serviceUnavailable("no bus")

        #expect(try f.vault.loadMode(api) == .unknown(.serviceUnavailable("no bus")))
    }

    // MARK: Locked collections

    @Test func loadModeCountsItemInLockedCollectionAsHeld() throws {
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true

        #expect(try f.vault.loadMode(api) == .mode(.sync, locked: true))
    }

    @Test func loadModeTrustsRecordedLockedCollection() throws {
        f.device.seed(api, "older device copy")
        f.sync.seed(api, "from sync")
        f.sync.isLocked = true
        try f.given(api, recordedAs: .sync)

        #expect(try f.vault.loadMode(api) == .mode(.sync, locked: true))
        #expect(f.log.entries == ["sync.holding api"])
    }

    // MARK: The record is only a hint

    @Test func loadModeIgnoresUnreadableRecord() throws {
        let config = f.folder.appending("config")
        try SecureFile.ensurePrivateFolder(config)
        try SecureFile.write("\(config)/modes.json", Array("not json".utf8))
        f.sync.seed(api, "from sync")

        #expect(try f.vault.loadMode(api) == .mode(.sync, locked: false))
    }

    // MARK: The rule itself

    @Test func decideAsksRecordedSlotFirstAndEachSlotAtMostOnce() {
        var asked: [SlotMode] = []
        let answer = Vault.decide(recorded: .sync) { mode in
            asked.append(mode)
            return .empty
        }

        #expect(answer == LoadMode.none)
        #expect(asked == [.sync, .device])
    }

    @Test func decideStopsAtTheRecordedSlotThatHolds() {
        var asked: [SlotMode] = []
        let answer = Vault.decide(recorded: .device) { mode in
            asked.append(mode)
            return .holds(locked: false)
        }

        #expect(answer == .mode(.device, locked: false))
        #expect(asked == [.device])
    }

    @Test func decideFallsThroughOnlyWhenTheRecordedSlotAnsweredEmpty() {
        let empty = Vault.decide(recorded: .sync) { mode in mode == .sync ? .empty : .holds(locked: false) }
        #expect(empty == .mode(.device, locked: false))
        let unknown = Vault.decide(recorded: .sync) { mode in
            mode == .sync ? .unknown(.serviceUnavailable("timeout")) : .holds(locked: false)
        }
        #expect(unknown == .unknown(.serviceUnavailable("timeout")))
    }

    @Test func decideNeverReadsAFailedCheckAsEmpty() {
        let answer = Vault.decide(recorded: .device) { mode in
            mode == .sync ? .unknown(.serviceUnavailable("no provider")) : .empty
        }

        #expect(answer == .unknown(.serviceUnavailable("no provider")))
    }
}
