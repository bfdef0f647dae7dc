import Testing
import TestSupport

/// The device slot and the Secret Service slot really are separate places, checked from outside vaultctl:
/// the files on disk, `secret-tool` on the real keyring, and a copy of the state folder on another bus.
@Suite("The two slots are separate", .tags(.needsServices))
struct SlotSeparationTests {
    @Test func deviceAndSyncValuesLiveApart() throws {
        let sb = try Sandbox()
        let x = sb.uniqueSlot("sep-x")
        let y = sb.uniqueSlot("sep-y")
        let xValue = TestData.textSecret(x)
        let yValue = TestData.textSecret(y)
        try sb.store(x, xValue, mode: "device")
        try sb.store(y, yValue, mode: "sync")

        // X: a sealed file here, nothing in the keyring.
        #expect(Paths.exists(sb.slotFile(x)), "the device file for X exists")
        let xFile = FileBytes.read(sb.slotFile(x)) ?? []
        #expect(!xFile.contains(bytes: xValue), "the device file is sealed, not the plain value")
        let xLookup = sb.secretToolLookup(x)
        #expect(xLookup.stdout.isEmpty, "secret-tool finds nothing for X: \(xLookup)")

        // Y: in the keyring, no file here.
        #expect(sb.secretToolLookup(y).stdout == yValue, "secret-tool prints Y's value")
        #expect(!Paths.exists(sb.slotFile(y)), "no device file for Y")
        for file in Sandbox.filesUnder(sb.stateFolder) {
            #expect(!(FileBytes.read(file) ?? []).contains(bytes: yValue), "\(file) holds Y's value")
        }

        // The state folder alone, on a bus whose keyring is empty: X still reads, Y is empty.
        let keyring = try SecretServiceInstance.start(.unlocked)
        defer { keyring.stop() }
        let other = try Sandbox(keyring)
        try Sandbox.copyFolder(sb.stateFolder, into: other.stateHome)
        #expect(!Paths.exists(other.configFolder), "only the state folder was copied")

        let readX = try other.read(x)
        #expect(readX.status == 0, "\(readX)")
        #expect(readX.stdout == xValue)
        let readY = try other.read(y)
        readY.expectFailure(66)
        #expect(try other.status(y).state == "none")
        #expect(try other.status(x).state == "on-this-device")

        // And the original sandbox still has both, each in its own slot.
        #expect(try sb.read(x).stdout == xValue)
        #expect(try sb.read(y).stdout == yValue)
        #expect(try sb.listed()[x] == ["device"])
        #expect(try sb.listed()[y] == ["sync"])
    }
}
