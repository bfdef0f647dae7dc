import Testing
import TestSupport

/// The sync slot is a plain Secret Service item with schema `org.vaultctl.Slot` and attribute `slot`, so
/// `secret-tool` sees what vaultctl stores and vaultctl sees what `secret-tool` stores.
@Suite("secret-tool interoperability", .tags(.needsServices))
struct SecretToolInteropTests {
    @Test func secretToolLooksUpWhatVaultctlStoredInSync() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-lookup")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret, mode: "sync")
        let r = sb.secretToolLookup(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret)
    }

    @Test func vaultctlReadsAndListsWhatSecretToolStored() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-store")
        let secret = TestData.binarySecret(name)
        try sb.putKeyringItem(name, secret, label: "L")

        #expect(try sb.listed()[name] == ["sync"])
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret)
    }
}
