import Testing
import TestSupport

/// Storing a slot in one mode after the other moves the value: the old slot is emptied.
@Suite("Moving a slot between modes", .tags(.needsServices))
struct ModeMoveTests {
    @Test func storeInSyncAfterDeviceRemovesDeviceFile() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("to-sync")
        try sb.store(name, Array("old-\(name)".utf8), mode: "device")
        #expect(Paths.exists(sb.slotFile(name)))

        let new = Array("new-\(name)".utf8)
        let r = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .bytes(new))
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "no warning expected: \(r.stderr)")
        #expect(!Paths.exists(sb.slotFile(name)), "the device file is gone")
        #expect(sb.secretToolLookup(name).stdout == new)
        #expect(try sb.listed()[name] == ["sync"])
        #expect(try sb.read(name).stdout == new)
    }

    @Test func storeInDeviceAfterSyncEmptiesSecretServiceItem() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("to-device")
        try sb.store(name, Array("old-\(name)".utf8), mode: "sync")
        #expect(sb.secretToolLookup(name).stdout == Array("old-\(name)".utf8))

        let new = Array("new-\(name)".utf8)
        let r = try sb.vaultctl(["store", name, "--mode", "device"], stdin: .bytes(new))
        #expect(r.status == 0, "\(r)")
        #expect(r.stderrBesidesNewVaultNotice.isEmpty, "no warning expected, the first device value's notice aside: \(r.stderr)")
        let lookup = sb.secretToolLookup(name)
        #expect(lookup.stdout.isEmpty, "the Secret Service item is gone: \(lookup)")
        #expect(lookup.status != 0, "secret-tool lookup finds nothing: \(lookup)")
        #expect(Paths.exists(sb.slotFile(name)))
        #expect(try sb.listed()[name] == ["device"])
        #expect(try sb.read(name).stdout == new)
    }
}
