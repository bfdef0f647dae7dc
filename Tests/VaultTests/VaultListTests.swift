import Testing
@testable import Vault
@testable import VaultRules

@Suite struct VaultListTests {
    let f = VaultFixture()

    @Test func listMergesBothSlotsSortedByNameThenMode() throws {
        for raw in ["delta", "bravo"] { f.device.seed(name(raw), "x") }
        for raw in ["charlie", "alpha", "bravo"] { f.sync.seed(name(raw), "x") }

        let listed = try f.vault.list()

        #expect(listed.entries == [
            .init(name: name("alpha"), mode: .sync),
            .init(name: name("bravo"), mode: .device),
            .init(name: name("bravo"), mode: .sync),
            .init(name: name("charlie"), mode: .sync),
            .init(name: name("delta"), mode: .device),
        ])
        #expect(listed.syncError == nil)
    }

    @Test func listOfEmptyVaultIsEmpty() throws {
        let listed = try f.vault.list()

        #expect(listed.entries.isEmpty)
        #expect(listed.syncError == nil)
    }

    @Test func listKeepsDeviceEntriesWhenSyncSlotCannotBeListed() throws {
        for raw in ["bravo", "alpha"] { f.device.seed(name(raw), "x") }
        f.sync.seed(name("charlie"), "x")
        f.sync.namesError = .serviceUnavailable("no provider")

        let listed = try f.vault.list()

        #expect(listed.entries == [
            .init(name: name("alpha"), mode: .device),
            .init(name: name("bravo"), mode: .device),
        ])
        #expect(listed.syncError == .serviceUnavailable("no provider"))
    }

    @Test func listFailsWhenDeviceSlotCannotBeListed() throws {
        f.device.namesError = .io(path: "/state", errno: 13, operation: "list")

        let error = #expect(throws: VaultError.self) { try f.vault.list() }

        #expect(error?.slotError == .io(path: "/state", errno: 13, operation: "list"))
    }
}
