import Testing
@testable import Vault

/// The forced-command check and the `authorized_keys` line.
@Suite struct ForcedCommandTests {
    @Test(arguments: ["vaultctl receive data", "/usr/local/bin/vaultctl receive data", "vaultctl  receive  data"])
    func theCommandTheSenderAsksForPasses(_ asked: String) {
        #expect(ForcedCommand.refusal(target: "data", originalCommand: asked) == nil)
    }

    @Test func withoutAForcedCommandItIsRefused() throws {
        let why = try #require(ForcedCommand.refusal(target: "data", originalCommand: nil))
        #expect(why.contains("only as the forced command"))
    }

    @Test(arguments: ["cat /etc/shadow", "vaultctl receive other", "vaultctl receive data; id", "vaultctl read data", "", "sh -c x"])
    func anythingElseIsRefused(_ asked: String) {
        #expect(ForcedCommand.refusal(target: "data", originalCommand: asked) != nil, "\(asked)")
    }

    @Test func theAuthorizedKeysLineBindsTheKeyToTheTargetAndRestrictsIt() {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILb8wWuYTs8eVxjVNr+alLJmbzO9ZVU7qbijtZgjn/Pq laptop\n"
        #expect(ForcedCommand.authorizedKeysLine(vaultctl: "/usr/local/bin/vaultctl", target: "data", publicKey: key)
                == "command=\"/usr/local/bin/vaultctl receive data\",restrict ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILb8wWuYTs8eVxjVNr+alLJmbzO9ZVU7qbijtZgjn/Pq laptop")
    }

    @Test(arguments: [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "command=\"x\" ssh-ed25519 AAAA",
        "ssh-ed25519",
        "ssh-ed25519 AAAA\"x",
        "ssh-ed25519 AAAA\u{1b}[2J",
    ])
    func anythingButOnePublicKeyLineIsRefused(_ text: String) {
        #expect(ForcedCommand.authorizedKeysLine(vaultctl: "/bin/vaultctl", target: "data", publicKey: text) == nil, "\(text)")
    }
}
