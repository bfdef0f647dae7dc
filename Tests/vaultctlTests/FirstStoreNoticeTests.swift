import Testing
import TestSupport

/// A first device-slot value with no vaultctl-gate beside vaultctl makes a vault in the state folder for good:
/// the store says so once the vault is made, once (issue 36, point 9), and succeeds.
@Suite("First store's notice", .tags(.needsServices))
struct FirstStoreNoticeTests {
    @Test func theStoreThatMakesTheVaultSaysSoOnce() throws {
        let sb = try Sandbox()
        let said = "made a new vault in \(sb.stateFolder), whose device key any program running as you can read"
        let first = try sb.vaultctl(["store", sb.uniqueSlot("first"), "--mode", "device"], stdin: .text("one"))
        #expect(first.status == 0 && first.stderr.contains(said), "\(first)")
        #expect(first.stderr.split(separator: "\n").count == 1, "one line: \(first.stderr)")
        let second = try sb.vaultctl(["store", sb.uniqueSlot("second"), "--mode", "device"], stdin: .text("two"))
        #expect(second.status == 0 && !second.stderr.contains("new vault"), "said once: \(second)")
    }

    /// A sync-slot value makes no device key, so nothing is said.
    @Test func aSyncValueMakesNoDeviceVault() throws {
        let provider = try SecretServiceInstance.start(.unlocked)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let r = try sb.vaultctl(["store", sb.uniqueSlot("sync"), "--mode", "sync"], stdin: .text("one"))
        #expect(r.status == 0 && !r.stderr.contains("new vault"), "\(r)")
    }
}

extension ProcessResult {
    /// Standard error without the line a store says as it makes a new vault (for tests of other warnings).
    var stderrBesidesNewVaultNotice: String {
        stderr.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { !$0.contains("made a new vault in") }.joined(separator: "\n")
    }
}
