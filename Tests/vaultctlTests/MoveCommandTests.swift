import Testing
import TestSupport

/// `vaultctl move SLOT --to sync|device`: the value moves (after PAM) and the old slot is emptied.
@Suite("move: between the device slot and the Secret Service", .tags(.needsServices))
struct MoveCommandTests {
    @Test func moveDeviceToSync() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-to-sync")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret, mode: "device")
        try #require(Paths.exists(sb.slotFile(name)))

        let r = try sb.vaultctl(["move", name, "--to", "sync"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty, "move prints nothing on stdout")
        #expect(!r.stderr.contains("bin-\(name)"), "never the secret")
        #expect(!Paths.exists(sb.slotFile(name)), "the device file is gone")
        #expect(sb.secretToolLookup(name).stdout == secret, "the keyring holds the exact bytes")
        #expect(try sb.listed()[name] == ["sync"])
        #expect(try sb.read(name).stdout == secret)
        let doc = try sb.status(name)
        #expect(doc.state == "in-slot" && doc.mode == "sync", "\(doc)")
    }

    @Test func moveSyncToDevice() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-to-device")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret, mode: "sync")
        try #require(sb.secretToolLookup(name).stdout == secret)

        let r = try sb.vaultctl(["move", name, "--to", "device"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty)
        let lookup = sb.secretToolLookup(name)
        #expect(lookup.stdout.isEmpty, "secret-tool lookup prints nothing: \(lookup)")
        #expect(Paths.exists(sb.slotFile(name)))
        #expect(try sb.listed()[name] == ["device"])
        #expect(try sb.read(name).stdout == secret)
        let doc = try sb.status(name)
        #expect(doc.state == "on-this-device" && doc.mode == "device", "\(doc)")
    }

    /// Moving to where it already is: exit 0, and it says so; nothing changes.
    @Test(arguments: ["device", "sync"])
    func moveToWhereItAlreadyIsSaysSo(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-same-\(mode)")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: mode)

        let r = try sb.vaultctl(["move", name, "--to", mode])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("already"), "says it already is there: \(r.stderr)")
        #expect(try sb.listed()[name] == [mode])
        #expect(Paths.exists(sb.slotFile(name)) == (mode == "device"))
        #expect(sb.secretToolLookup(name).stdout == (mode == "sync" ? secret : []))
        #expect(try sb.read(name).stdout == secret)
    }

    /// Move reads the secret, so it authenticates like read; refused, nothing moves.
    @Test(arguments: [AskpassMode.wrong, .declining, .unset])
    func moveIsGatedByPAM(_ askpass: AskpassMode) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-pam")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: "device")

        let r = try sb.vaultctl(["move", name, "--to", "sync"], askpass: askpass)
        #expect(r.status == 77, "\(askpass): \(r)")
        #expect(r.stdout.isEmpty)
        #expect(Paths.exists(sb.slotFile(name)), "the value stays where it was")
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "nothing was written to the keyring")
        #expect(try sb.listed()[name] == ["device"])
        #expect(try sb.read(name).stdout == secret)
    }

    @Test func moveOfEmptySlotIs66() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-empty")
        let r = try sb.vaultctl(["move", name, "--to", "sync"])
        #expect(r.status == 66, "\(r)")
        #expect(sb.secretToolLookup(name).stdout.isEmpty)
        #expect(!Paths.exists(sb.slotFile(name)))
    }

    @Test func moveWithoutTargetIsUsageError() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-usage")
        try sb.store(name, TestData.textSecret(name), mode: "device")
        let r = try sb.vaultctl(["move", name])
        #expect(r.status == 64, "\(r)")
        #expect(Paths.exists(sb.slotFile(name)))
    }

    /// What a move killed after writing and recording the target, before deleting the source, leaves: the
    /// same value in both slots. Running the move again must finish it, so the old slot ends up empty.
    @Test func rerunningAnInterruptedMoveEmptiesTheOldSlot() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mv-leftover")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: "device")
        // The copy an interrupted `move --to device` from sync would have left behind in the keyring.
        try sb.putKeyringItem(name, secret, label: "leftover")
        // Reads use the device copy, but a copy that may leave the device is in the keyring: in-slot.
        let label = try Fixtures.sharedKeyring.get().defaultCollectionLabel()
        let both = try sb.status(name)
        #expect(both.state == "in-slot" && both.mode == "device", "\(both)")
        #expect(both.message.contains("'\(label)'"), "\(both.message)")
        StatusTests.expectHonest(both)

        let r = try sb.vaultctl(["move", name, "--to", "device"])
        #expect(r.status == 0, "\(r)")
        #expect(try sb.read(name).stdout == secret)
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "the keyring copy is gone after move --to device: \(r.stderr)")
        #expect(Paths.exists(sb.slotFile(name)))
        #expect(try sb.listed()[name] == ["device"])
        let doc = try sb.status(name)
        #expect(doc.state == "on-this-device" && doc.mode == "device", "\(doc)")
    }
}
