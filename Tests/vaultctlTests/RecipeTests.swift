#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The README's recipes for `askpass` and `supply`, run for real: the exact lines it shows (with the binary
/// under test for `vaultctl`) against a real `ssh-add` and `ssh-agent`, and a real `gnome-keyring-daemon`
/// on a private bus. Each test first checks the README still shows those lines.
@Suite("README recipes", .tags(.needsServices))
struct RecipeTests {
    // MARK: ssh-add

    /// What one run of the ssh-add recipe did.
    struct SSHAddRun {
        let result: ProcessResult
        /// The key's fingerprint (`SHA256:…`).
        let fingerprint: String
        /// `ssh-add -l` afterwards.
        let agentKeys: [String]
        let passphrase: String
    }

    /// Makes a passphrase-protected key at `~/.ssh/id_ed25519`, stores the passphrase in slot `ssh-key`
    /// (suppliable or not), writes the wrapper with the recipe's first line, starts a private agent, and
    /// runs the recipe's second line with `password` for PAM.
    private func runSSHAddRecipe(_ sb: Sandbox, allowSupply: Bool, password: CountedPassword,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> SSHAddRun {
        let readme = Recipe.readme
        try #require(readme.contains(Recipe.sshWrapper) && readme.contains(Recipe.sshAdd),
                     "README.md no longer shows the ssh-add recipe this test runs", sourceLocation: sourceLocation)

        let passphrase = "key-passphrase-\(sb.uniqueSlot("pp"))"
        let fingerprint = try sb.makeSSHKey(passphrase: passphrase, sourceLocation: sourceLocation)
        let store = try sb.vaultctl(["store", "ssh-key"] + (allowSupply ? ["--allow-supply"] : []),
                                    stdin: .text(passphrase), sourceLocation: sourceLocation)
        try #require(store.status == 0, "store ssh-key failed: \(store)", sourceLocation: sourceLocation)

        let wrapper = "\(sb.home)/.local/bin/vaultctl-askpass-ssh"
        // A fresh account has no ~/.local/bin: the recipe makes it (issue 36, point 11).
        #expect(!Paths.exists("\(sb.home)/.local/bin"), sourceLocation: sourceLocation)
        let write = try sb.shell(try Recipe.usingBuiltBinary(Recipe.sshWrapper), overriding: [:],
                                 sourceLocation: sourceLocation)
        try #require(write.status == 0, "the wrapper line failed: \(write)", sourceLocation: sourceLocation)
        #expect(FileText.read(wrapper) == "#!/bin/sh\nexec \(Paths.vaultctl) askpass ssh-key -- \"$@\"\n",
                sourceLocation: sourceLocation)
        #expect(access(wrapper, X_OK) == 0, "chmod +x", sourceLocation: sourceLocation)

        let agent = try SSHAgent.start(socket: try sb.agentSocketPath(), sourceLocation: sourceLocation)
        defer { agent.stop() }
        // Nothing but the recipe's own variables and the sandbox's: no DISPLAY, stdin /dev/null, no terminal.
        let r = try sb.shell(Recipe.sshAdd, overriding: [
            "SSH_AUTH_SOCK": agent.socket,
            "VAULT_ASKPASS": try sb.promptRecordingAskpass(password),
        ], sourceLocation: sourceLocation)
        return SSHAddRun(result: r, fingerprint: fingerprint, agentKeys: agent.listedKeys(sourceLocation: sourceLocation),
                         passphrase: passphrase)
    }

    @Test(.enabled(if: Recipe.sshToolsInstalled, "ssh-keygen, ssh-agent or ssh-add is missing (Debian package openssh-client); run 'make deps'"))
    func sshAddTakesTheKeyPassphraseFromAskpass() throws {
        let sb = try Sandbox()
        let run = try runSSHAddRecipe(sb, allowSupply: true, password: .correct)
        #expect(run.result.status == 0, "\(run.result)")
        #expect(run.agentKeys.contains { $0.contains(run.fingerprint) }, "the agent holds the key: \(run.agentKeys)")

        // One PAM prompt, showing what ssh-add asked for.
        #expect(sb.prompts.count == 1, "\(sb.prompts)")
        let prompt = sb.prompts.first ?? ""
        #expect(prompt.contains("ssh-key") && prompt.contains("Enter passphrase for")
                && prompt.contains("\(sb.home)/.ssh/id_ed25519"), "\(prompt)")
        #expect(!prompt.contains(run.passphrase))
        #expect(!run.result.stderr.contains(run.passphrase) && !run.result.stdoutText.contains(run.passphrase))
        #expect(try sb.statusObject("ssh-key")["lastSupply"] is [String: Any], "recorded as the slot's last supply")
    }

    @Test(.enabled(if: Recipe.sshToolsInstalled, "ssh-keygen, ssh-agent or ssh-add is missing (Debian package openssh-client); run 'make deps'"))
    func sshAddWithAWrongPAMPasswordAddsNothing() throws {
        let sb = try Sandbox()
        let run = try runSSHAddRecipe(sb, allowSupply: true, password: .wrong)
        #expect(run.result.status != 0, "\(run.result)")
        #expect(run.agentKeys.isEmpty, "no key added: \(run.agentKeys)")
        #expect(sb.prompts.count == 1, "ssh-add gives up after one empty answer: \(sb.prompts)")
        #expect(run.result.stderr.lowercased().contains("authentication failed"), "vaultctl says why: \(run.result.stderr)")
        #expect(!run.result.stderr.contains(run.passphrase) && !run.result.stdoutText.contains(run.passphrase))
        #expect(try sb.statusObject("ssh-key")["lastSupply"] is NSNull)
    }

    @Test(.enabled(if: Recipe.sshToolsInstalled, "ssh-keygen, ssh-agent or ssh-add is missing (Debian package openssh-client); run 'make deps'"))
    func sshAddWithASlotNotAllowedToBeSuppliedAddsNothing() throws {
        let sb = try Sandbox()
        let run = try runSSHAddRecipe(sb, allowSupply: false, password: .correct)
        #expect(run.result.status != 0, "\(run.result)")
        #expect(run.agentKeys.isEmpty, "no key added: \(run.agentKeys)")
        #expect(sb.prompts.isEmpty, "refused before any prompt: \(sb.prompts)")
        #expect(run.result.stderr.contains("allow-supply"), "vaultctl says how to allow it: \(run.result.stderr)")
        #expect(!run.result.stderr.contains(run.passphrase) && !run.result.stdoutText.contains(run.passphrase))
    }

    // MARK: gnome-keyring

    /// On a private keyring whose login collection is locked, the recipe restarts gnome-keyring unlocked with
    /// the password from the device slot; run again while unlocked, it is refused before any prompt.
    @Test func gnomeKeyringIsUnlockedWithThePasswordFromTheDeviceSlot() throws {
        try #require(Recipe.readme.contains(Recipe.keyringUnlock),
                     "README.md no longer shows the gnome-keyring recipe this test runs")
        let keyring = try SecretServiceInstance.start(.unlocked)
        var replacements: [pid_t] = []
        defer {
            // The replacement daemon is not in the instance's pid file: end it here, then the bus.
            Processes.terminate(keyring.keyringDaemons + replacements)
            keyring.stop()
        }
        let sb = try Sandbox(keyring)
        let store = try sb.vaultctl(["store", "keyring-login", "--mode", "device", "--allow-supply"],
                                    stdin: .text(SecretServiceInstance.keyringPassword))
        try #require(store.status == 0, "\(store)")
        // An item in the collection, to show afterwards that it is really open.
        let item = sb.uniqueSlot("kr-item")
        let itemSecret = TestData.textSecret(item)
        try sb.store(item, itemSecret, mode: "sync")

        let lock = keyring.lockLoginCollection()
        try #require(lock.status == 0, "locking the collection failed: \(lock)")
        try #require(keyring.loginCollectionLocked() == true)
        let original = keyring.keyringDaemons
        try #require(original.count == 1, "the instance's own daemon: \(original)")

        let recipe = try Recipe.usingBuiltBinary(Recipe.keyringUnlock)
        let env = keyring.keyringEnvironment.merging(["VAULT_ASKPASS": try sb.countingAskpass(.correct)]) { $1 }
        let r = try sb.shell(recipe, overriding: env)
        replacements = keyring.keyringDaemons.filter { !original.contains($0) }
        #expect(r.status == 0, "\(r)")
        #expect(sb.askpassCalls == 1, "one PAM prompt")
        #expect(!r.stderr.contains(SecretServiceInstance.keyringPassword))
        #expect(!r.stdoutText.contains(SecretServiceInstance.keyringPassword))
        #expect(replacements.count == 1, "one daemon replaced the instance's: \(keyring.keyringDaemons)")

        var locked = keyring.loginCollectionLocked()
        for _ in 0..<30 where locked != false {  // the new daemon may take a moment to answer on the bus
            usleep(100_000)
            locked = keyring.loginCollectionLocked()
        }
        #expect(locked == false, "the login collection is unlocked")
        let read = try sb.read(item)
        #expect(read.status == 0, "its items are readable again: \(read)")
        #expect(read.stdout == itemSecret)

        sb.resetAskpassLog()
        let again = try sb.shell(recipe, overriding: env)
        #expect(again.status == 0, "already unlocked is not a failure: \(again)")
        #expect(again.stderr.contains("the target is already unlocked"), "\(again.stderr)")
        #expect(sb.askpassCalls == 0, "refused before any prompt")
        #expect(keyring.keyringDaemons == replacements, "no other daemon was started")

        Processes.terminate(keyring.keyringDaemons + replacements)
        #expect(keyring.keyringDaemons.isEmpty, "the replacement daemon was stopped")
    }
}
