import Testing
import TestSupport

/// `store` then `read`: the exact bytes come back, from 1 byte up to the 65536-byte limit, in both modes.
@Suite("Store and read round trips", .tags(.needsServices))
struct RoundTripTests {
    @Test func deviceRoundTripKeepsBinaryBytes() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("dev-bin")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret, mode: "device")
        #expect(Paths.exists(sb.slotFile(name)))
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret, "stdout is a pipe: the exact bytes, no newline added or trimmed")
    }

    @Test func syncRoundTripKeepsBinaryBytes() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("sync-bin")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret, mode: "sync")
        #expect(!Paths.exists(sb.slotFile(name)), "a sync store writes no device file")
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret)
    }

    @Test func storeWithoutModeUsesDeviceSlot() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("default-mode")
        try sb.store(name, TestData.textSecret(name))
        #expect(Paths.exists(sb.slotFile(name)))
        #expect(try sb.listed()[name] == ["device"])
    }

    @Test func storeAcceptsModeWithEqualsSign() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mode-eq")
        let secret = TestData.textSecret(name)
        let r = try sb.vaultctl(["store", "--mode=sync", name], stdin: .bytes(secret))
        #expect(r.status == 0, "\(r)")
        #expect(try sb.listed()[name] == ["sync"])
        #expect(try sb.read(name).stdout == secret)
    }

    @Test(arguments: ["device", "sync"])
    func oneByteSecretRoundTrips(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("one-\(mode)")
        try sb.store(name, [0x00], mode: mode)
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == [0x00])
    }

    @Test(arguments: ["device", "sync"])
    func largestSecretRoundTrips(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("max-\(mode)")
        let secret = TestData.pattern(count: 65536, seed: 3)
        try sb.store(name, secret, mode: mode)
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.count == 65536)
        #expect(r.stdout == secret)
    }

    @Test(arguments: ["device", "sync"])
    func storeOfEmptyStdinIs65(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("empty-\(mode)")
        let r = try sb.vaultctl(["store", name, "--mode", mode], stdin: .bytes([]))
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("empty"), "\(r.stderr)")
        #expect(try sb.listed()[name] == nil)
        #expect(try sb.read(name).status == 66)
    }

    @Test(arguments: ["device", "sync"])
    func storeOfOversizedSecretIs65AndKeepsOldValue(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("big-\(mode)")
        let old = TestData.textSecret(name)
        try sb.store(name, old, mode: mode)
        let before = try sb.listed()

        let r = try sb.vaultctl(["store", name, "--mode", mode], stdin: .bytes(TestData.pattern(count: 65537)))
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("65536"), "\(r.stderr)")
        #expect(try sb.listed()[name] == before[name])
        let back = try sb.read(name)
        #expect(back.status == 0, "\(back)")
        #expect(back.stdout == old, "the previous value is still there")

        // And a slot that had no value gets none.
        let fresh = sb.uniqueSlot("big-fresh-\(mode)")
        let r2 = try sb.vaultctl(["store", fresh, "--mode", mode], stdin: .bytes(TestData.pattern(count: 65537)))
        #expect(r2.status == 65, "\(r2)")
        #expect(try sb.listed()[fresh] == nil)
        #expect(try sb.read(fresh).status == 66)
    }

    @Test func storeReplacesOldValue() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("replace")
        try sb.store(name, Array("first-\(name)".utf8))
        try sb.store(name, Array("second-\(name)".utf8))
        #expect(try sb.read(name).stdout == Array("second-\(name)".utf8))
    }
}
