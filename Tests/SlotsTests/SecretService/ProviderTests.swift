import Testing
@testable import SecretService

/// What vaultctl knows of each provider, by its process name: only KeePassXC has ways of its own (the
/// end-to-end tests run real KeePassXC and gnome-keyring).
@Suite struct ProviderTests {
    @Test func onlyKeePassXCHasWaysOfItsOwn() {
        let keepassxc = Provider(processName: "keepassxc")
        #expect(keepassxc.namesClientsByExecutable && keepassxc.keepsCopies && keepassxc.searchMayPrompt)
        for name in ["gnome-keyring-d", "kwalletd5", "ksecretd", "python3", "", "KeePassXC", "keepassxc-proxy"] {
            let p = Provider(processName: name)
            #expect(!p.namesClientsByExecutable && !p.keepsCopies && !p.searchMayPrompt, "\(name)")
        }
    }

    @Test func eachProgramIsNamedAsAPersonKnowsIt() {
        let names = ["keepassxc": "KeePassXC", "gnome-keyring-d": "gnome-keyring", "kwalletd6": "KWallet", "python3": "python3"]
        for (process, program) in names { #expect(Provider(processName: process).programName == program) }
        #expect(Provider(processName: "a\u{1B}[31mb").programName.unicodeScalars.allSatisfy { $0.value >= 0x20 })
    }
}
