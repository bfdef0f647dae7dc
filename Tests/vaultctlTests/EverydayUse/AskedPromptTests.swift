import Testing
@testable import vaultctl

/// How askpass judges and shows the prompt it was given.
@Suite("askpass prompt")
struct AskedPromptTests {
    @Test func hidesTheUserPartOfEveryURL() {
        #expect(AskedPrompt.shown("Password for 'https://ghp_x@github.com': ") == "Password for 'https://…@github.com': ")
        #expect(AskedPrompt.hidingURLUsers("a https://u:p@h/x and ssh://me@host:22 b") == "a https://…@h/x and ssh://…@host:22 b")
        #expect(AskedPrompt.hidingURLUsers("Password for 'https://github.com': ") == "Password for 'https://github.com': ")
        #expect(AskedPrompt.hidingURLUsers("Enter passphrase for key '/home/a/.ssh/id_ed25519': ") == "Enter passphrase for key '/home/a/.ssh/id_ed25519': ")
        #expect(AskedPrompt.hidingURLUsers("https://a@b@c/") == "https://…@c/")
    }

    @Test func recognisesGitsUsernamePromptOnly() {
        #expect(AskedPrompt.isGitUsernamePrompt("Username for 'https://github.com': "))
        #expect(!AskedPrompt.isGitUsernamePrompt("Password for 'https://alice@github.com': "))
        #expect(!AskedPrompt.isGitUsernamePrompt("Enter passphrase for key"))
    }

    @Test func cleansAndShortensForDisplay() {
        #expect(AskedPrompt.shown("a\nb\u{7f}c") == "a b c")
        #expect(AskedPrompt.shown(String(repeating: "x", count: 200)).count == 80)
    }
}
