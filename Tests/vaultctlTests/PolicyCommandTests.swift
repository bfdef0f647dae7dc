import Foundation
import Testing
import TestSupport

/// `vaultctl policy check [FILE]` and the user's policy in `$XDG_CONFIG_HOME/vaultctl/policy.json`: an
/// unknown version or key rejects the whole document (78), naming the file.
@Suite("policy", .tags(.needsServices))
struct PolicyCommandTests {
    func document(_ sb: Sandbox, _ text: String) throws -> String {
        let path = "\(sb.root)/candidate.json"
        try #require(FileText.write(path, text))
        return path
    }

    @Test func anUnknownKeyIs78NamingTheFileAndTheKey() throws {
        let sb = try Sandbox()
        let path = try document(sb, #"{"version": 1, "rateLimit": {"failures": 3, "blockSecs": 60}}"#)
        let r = sb.vaultctlWithoutPAM(["policy", "check", path])
        #expect(r.status == 78, "\(r)")
        #expect(r.stderr.contains(path), "\(r.stderr)")
        #expect(r.stderr.contains("rateLimit.blockSecs"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func anUnknownTopLevelKeyIs78() throws {
        let sb = try Sandbox()
        let path = try document(sb, #"{"version": 1, "allowEverything": true}"#)
        let r = sb.vaultctlWithoutPAM(["policy", "check", path])
        #expect(r.status == 78, "\(r)")
        #expect(r.stderr.contains(path) && r.stderr.contains("allowEverything"), "\(r.stderr)")
    }

    @Test func anUnknownVersionIs78() throws {
        let sb = try Sandbox()
        let path = try document(sb, #"{"version": 2}"#)
        let r = sb.vaultctlWithoutPAM(["policy", "check", path])
        #expect(r.status == 78, "\(r)")
        #expect(r.stderr.contains(path) && r.stderr.contains("version 2"), "\(r.stderr)")
    }

    @Test func theShippedDefaultIsValid() throws {
        let sb = try Sandbox()
        let path = "\(Paths.repositoryRoot)/policy/default.json"
        let r = sb.vaultctlWithoutPAM(["policy", "check", path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.starts(with: Array("\(path) is valid.".utf8)), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("3 failures within 300 s block for 300 s"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("supply allowed by default: no"), "\(r.stdoutText)")
    }

    @Test func theUserPolicyIsThePolicyInEffect() throws {
        let sb = try Sandbox()
        let none = sb.vaultctlWithoutPAM(["policy", "check"])
        #expect(none.status == 0 && none.stdoutText.contains("3 failures within 300 s"), "the built-in default: \(none)")

        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":2,"windowSeconds":300,"blockSeconds":1},"slotDefaults":{"allowSupply":true}}"#)
        let r = sb.vaultctlWithoutPAM(["policy", "check"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText.contains("2 failures within 300 s block for 1 s"), "\(r.stdoutText)")

        let name = sb.uniqueSlot("policy-default")
        try sb.store(name, TestData.textSecret(name))
        let supply = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(supply.status == 0, "slotDefaults.allowSupply lets a slot with no setting be supplied: \(supply)")
    }

    @Test func aMalformedUserPolicyStopsGatedCommandsBeforeAnyPrompt() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("policy-bad")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":3,"windowSecs":300}}"#)

        for args in [["read", name], ["supply", name, "--", "/bin/true"], ["askpass", name],
                     ["allow-supply", name, "on"], ["unlock"], ["policy", "check"]] {
            let r = try sb.vaultctlCounted(args)
            #expect(r.status == 78, "\(args): \(r)")
            #expect(r.stderr.contains(sb.policyPath), "\(args) names the file: \(r.stderr)")
            #expect(r.stderr.contains("rateLimit.windowSecs"), "\(args) names the key: \(r.stderr)")
        }
        #expect(sb.askpassCalls == 0)
    }

    @Test func aUserPolicyThatOthersCanReadIsRefused() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("policy-mode")
        try sb.store(name, TestData.textSecret(name))
        try sb.writePolicy(#"{"version":1}"#)
        try #require(chmod(sb.policyPath, 0o644) == 0)
        let r = try sb.vaultctlCounted(["read", name])
        #expect(r.status == 78, "\(r)")
        #expect(r.stderr.contains(sb.policyPath), "\(r.stderr)")
        #expect(sb.askpassCalls == 0)
    }
}
