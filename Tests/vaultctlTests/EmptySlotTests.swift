import Testing
import TestSupport

/// A slot with no value: read and delete say so with 66.
@Suite("Empty slots", .tags(.needsServices))
struct EmptySlotTests {
    @Test func readOfNeverStoredSlotIs66() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("never")
        let r = try sb.read(name)
        r.expectFailure(66, saying: "Slot '\(name)' is empty")
    }

    @Test func deleteOfNeverStoredSlotIs66() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("never-del")
        let r = try sb.vaultctl(["delete", name])
        #expect(r.status == 66, "\(r)")
        #expect(r.stderr.contains("Slot '\(name)' holds no value; nothing was deleted"), "\(r.stderr)")
    }

    @Test(arguments: ["device", "sync"])
    func deleteRemovesValueAndReadIs66(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("del-\(mode)")
        try sb.store(name, TestData.textSecret(name), mode: mode)
        let d = try sb.vaultctl(["delete", name])
        #expect(d.status == 0, "\(d)")
        #expect(d.stdout.isEmpty)

        let r = try sb.read(name)
        r.expectFailure(66)
        #expect(try sb.listed()[name] == nil)
        #expect(!Paths.exists(sb.slotFile(name)))
        #expect(sb.secretToolLookup(name).stdout.isEmpty)
        #expect(try sb.vaultctl(["delete", name]).status == 66, "a second delete finds nothing")
    }
}
