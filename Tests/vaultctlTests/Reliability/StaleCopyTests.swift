#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A copy that the record says is not the value is never served as the value (issue 22, points 3 and 4):
/// reads fall through to the other slot only when the recorded slot answered that it is empty, never when it
/// could not be asked; a record that cannot be read is not "no record".
@Suite("stale copies are never served", .tags(.needsServices))
struct StaleCopyTests {
    static let noBus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]

    /// `store --mode sync` killed between recording `sync` and removing the device copy (its unlink of the
    /// device file): the keyring holds the new value, the device slot the old one.
    static func killedSyncStore(_ sb: Sandbox, _ name: String) throws {
        try sb.storeWithoutPAM(name, Array("OLD-value".utf8))
        let s = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("NEW-value"),
                                prefix: [Paths.tool("strace"), "-f", "-qq", "-o", "/dev/null", "-P", sb.slotFile(name),
                                         "-e", "trace=unlink", "-e", "inject=unlink:signal=KILL:when=1"])
        try #require(s.status == 128 + SIGKILL, "killed at its unlink of the device copy: \(s)")
        try #require(sb.keyringValue(name) == Array("NEW-value".utf8) && sb.deviceFileSize(name) != nil)
        try #require(sb.recordedMode(name) == "sync")
    }

    /// Without the bus the recorded slot cannot be asked: "could not look" (69), never the old device value.
    @Test func aReadThatCannotReachTheRecordedSlotIs69NotTheOldCopy() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("stale-nobus")
        try Self.killedSyncStore(sb, name)

        let r = try sb.vaultctl(["read", name], overriding: Self.noBus)
        #expect(r.status == 69 && r.stdout.isEmpty, "\(r)")
        #expect(!r.stdoutText.contains("OLD"))
        let status = try sb.vaultctl(["status", name, "--json"], overriding: Self.noBus)
        #expect(status.status == 0 && status.stdoutText.contains(#""state":"unknown""#), "\(status)")
        #expect(status.stdoutText.contains("not served as the value"), "\(status)")
        // With the bus, the recorded slot answers: the new value.
        let back = try sb.readReliably(name)
        #expect(back.status == 0 && back.stdoutText == "NEW-value", "\(back)")
    }

    /// A damaged record is not "no record": with a copy in each slot vaultctl cannot tell which is the
    /// value, so it serves neither (78, naming the file), asks no password, and changes nothing; with the
    /// file moved aside, a store sets the value again (after the password: it replaces something).
    @Test func aDamagedRecordWithACopyInEachSlotServesNeither() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("stale-damaged")
        try sb.relaxChangeGates()
        try Self.killedSyncStore(sb, name)
        try sb.writePolicy(#"{"version": 1}"#)
        let record = "\(sb.configFolder)/modes.json"
        try #require(FileText.write(record, "{\"version\": 1, \"slots\": {", mode: 0o600))
        sb.resetAskpassLog()

        let r = try sb.vaultctlCounted(["read", name])
        #expect(r.status == 78 && r.stdout.isEmpty, "\(r)")
        #expect(r.stderr.contains("modes.json") && r.stderr.contains("both slots"), "\(r)")
        #expect(sb.askpassCalls == 0, "refused before the prompt")
        let status = try sb.vaultctl(["status", name, "--json"])
        #expect(status.stdoutText.contains(#""state":"unknown""#), "\(status)")

        // No entry at all (the record moved aside): the same, since nothing says which copy is the value.
        try #require(rename(record, "\(record).aside") == 0)
        let none = try sb.vaultctlCounted(["read", name])
        #expect(none.status == 78 && none.stdout.isEmpty, "\(none)")

        let again = try sb.vaultctlCounted(["store", name, "--mode", "sync"], stdin: .text("SET-AGAIN"))
        #expect(again.status == 0, "\(again)")
        #expect(sb.deviceFileSize(name) == nil, "the other copy is gone")
        #expect(try sb.vaultctlCounted(["read", name]).stdoutText == "SET-AGAIN")
    }

    /// Nothing that asks no password points the record at another copy, whatever state folder or bus it is
    /// given: a `move` that sees the value "already there" through an empty state folder, or through a bus
    /// with an empty keyring, asks for the password before it rewrites the record, and a `delete` that sees
    /// nothing there removes the record's entry only after the password. The owner's reads keep the new value.
    @Test func noUngatedCommandPointsTheRecordAtAnOlderCopy() throws {
        let sb = try Sandbox()
        let elsewhere = try Fixtures.makeFolder("elsewhere")
        let emptyKeyring = try SecretServiceInstance.start(.unlocked)
        defer { emptyKeyring.stop() }
        // New value in the device slot, an older one left in the keyring (a store while the bus was away).
        let x = sb.uniqueSlot("stale-x")
        try InterruptedDeleteTests.newInDeviceOldInSync(sb, x)
        let viaState = try sb.vaultctl(["move", x, "--to", "sync"], askpass: .declining, overriding: ["XDG_STATE_HOME": elsewhere])
        #expect(viaState.status == 77, "\(viaState)")
        #expect(sb.recordedMode(x) == "device")
        #expect(try sb.readReliably(x).stdoutText == "NEW-value")

        // New value in the keyring, an older one in the device slot (a sync store killed before its unlink).
        try sb.relaxChangeGates()
        let y = sb.uniqueSlot("stale-y")
        try Self.killedSyncStore(sb, y)
        try sb.writePolicy(#"{"version": 1}"#)
        let viaBus = try sb.vaultctl(["move", y, "--to", "device"], askpass: .declining,
                                     overriding: ["DBUS_SESSION_BUS_ADDRESS": emptyKeyring.busAddress])
        #expect(viaBus.status == 77, "\(viaBus)")
        #expect(sb.recordedMode(y) == "sync")
        let viaBoth = try sb.vaultctl(["delete", y], askpass: .declining,
                                      overriding: ["XDG_STATE_HOME": elsewhere, "DBUS_SESSION_BUS_ADDRESS": emptyKeyring.busAddress])
        #expect(viaBoth.status == 77, "removing the entry is asked for: \(viaBoth)")
        #expect(sb.recordedMode(y) == "sync", "the record's entry stays")
        #expect(try sb.readReliably(y).stdoutText == "NEW-value")
        let noBus = try sb.vaultctl(["read", y], overriding: Self.noBus)
        #expect(noBus.status == 69 && noBus.stdout.isEmpty, "\(noBus)")
    }

    /// A damaged record, a device value, and no bus: the keyring may hold a newer copy, so the device copy is
    /// not served, and the error names the record (78), the one thing the person can fix here.
    @Test func aDamagedRecordWithoutTheBusNamesTheRecord() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("damaged-nobus")
        try sb.store(name, Array("device-value".utf8))
        try #require(FileText.write("\(sb.configFolder)/modes.json", "not json", mode: 0o600))
        let r = try sb.vaultctl(["read", name], overriding: Self.noBus)
        #expect(r.status == 78 && r.stdout.isEmpty && r.stderr.contains("modes.json"), "\(r)")
        #expect(r.stderr.contains("could not be asked"), "\(r)")
    }

    /// A damaged record and one copy: that copy is the value.
    @Test func aDamagedRecordWithOneCopyServesIt() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("one-copy")
        try sb.store(name, Array("only-copy".utf8), mode: "sync")
        try #require(FileText.write("\(sb.configFolder)/modes.json", "not json", mode: 0o600))
        let r = try sb.readReliably(name)
        #expect(r.status == 0 && r.stdoutText == "only-copy", "\(r)")
    }

    /// The mirror, without a kill: the value in the device slot, an older copy left in the keyring (a store
    /// while the bus was away). A device slot that cannot be looked at safely is an error in itself: the
    /// read fails with its own code, never with the older keyring value, and status says unknown.
    @Test(arguments: ["loose-mode", "key-missing", "file-of-another-slot"])
    func aDeviceSlotThatCannotBeLookedAtNeverFallsBackToTheOlderKeyringCopy(damage: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mirror")
        try InterruptedDeleteTests.newInDeviceOldInSync(sb, name)
        let expected: Int32
        switch damage {
        case "loose-mode":
            try #require(chmod(sb.slotFile(name), 0o644) == 0)
            expected = 78
        case "key-missing":
            try #require(rename("\(sb.stateFolder)/device.key", "\(sb.stateFolder)/device.key.away") == 0)
            expected = 65
        default:
            let other = sb.uniqueSlot("other")
            try sb.store(other, Array("another-slot".utf8))
            let bytes = try #require(FileBytes.read(sb.slotFile(other)))
            try #require(FileBytes.write(sb.slotFile(name), bytes, mode: 0o600))
            expected = 65
        }
        let r = try sb.readReliably(name)
        #expect(r.status == expected && r.stdout.isEmpty, "\(r)")
        #expect(!r.stdoutText.contains("OLD"), "the older keyring copy was served: \(r)")
        let status = try sb.vaultctl(["status", name, "--json"])
        #expect(status.stdoutText.contains(#""state":"unknown""#), "\(status)")
    }
}
