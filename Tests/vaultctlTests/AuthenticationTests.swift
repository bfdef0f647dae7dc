import Testing
import TestSupport

/// Every read authenticates through PAM (pam_wrapper + pam_matrix here); a failure is 77 and prints nothing.
@Suite("PAM authentication on read", .tags(.needsServices))
struct AuthenticationTests {
    @Test func readWithWrongPasswordIs77() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("wrong-pw")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.read(name, askpass: .wrong)
        #expect(r.status == 77, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("Authentication failed"), "\(r.stderr)")
    }

    @Test func readWhenAskpassDeclinesIs77() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("declined")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.read(name, askpass: .declining)
        #expect(r.status == 77, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("exited with status 1"), "\(r.stderr)")
    }

    /// The runner starts every child in its own session, so it has no controlling terminal.
    @Test func readWithoutAskpassOrTerminalIs77() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("no-tty")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.read(name, askpass: .unset)
        #expect(r.status == 77, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("VAULT_ASKPASS"), "\(r.stderr)")
    }

    @Test func readWithMissingAskpassProgramIs77() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("no-prog")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": "\(sb.root)/no-such-askpass"])
        #expect(r.status == 77, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("VAULT_ASKPASS"), "\(r.stderr)")
    }
}
