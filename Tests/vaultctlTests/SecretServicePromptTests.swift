import Testing
import TestSupport

/// A provider's prompts (org.freedesktop.Secret.Prompt), run the Secret Service way and always bounded: each
/// case is a real service object on a private bus (`scripts/fake-secret-service.py`) that answers
/// `CreateItem` or `Unlock` with a prompt, as KeePassXC does for every new item and for an item behind its
/// access confirmation. (KeePassXC itself is in `KeePassXCTests`.)
@Suite("Secret Service prompts", .tags(.needsServices))
struct SecretServicePromptTests {
    static let bound: Duration = .seconds(15)

    private func scripted(_ kind: SecretServiceInstance.Kind, _ body: (SecretServiceInstance, Sandbox) throws -> Void) throws {
        let provider = try SecretServiceInstance.start(kind)
        defer { provider.stop() }
        try body(provider, try Sandbox(provider))
    }

    /// A prompt that completes when it is run (no dialog) finishes the store, even without a display.
    @Test func aPromptThatCompletesByItselfFinishesTheStore() throws {
        try scripted(.scriptedPromptCreate) { provider, sb in
            let store = try sb.vaultctl(["store", sb.uniqueSlot("prompted"), "--mode", "sync"], stdin: .text("v"))
            #expect(store.status == 0, "\(store)")
            #expect(!store.stderr.contains("answer it"), "no person was asked: \(store.stderr)")
            #expect(provider.providerEvents.contains("created"), "\(provider.providerEvents)")
        }
    }

    /// Headless, a prompt that needs a person cannot be answered: refused within seconds, and dismissed.
    @Test func withoutADisplayAPromptThatNeedsAPersonIsRefusedAtOnce() throws {
        try scripted(.scriptedPromptSilent) { provider, sb in
            let name = sb.uniqueSlot("headless")
            let store = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("v"))
            #expect(store.status == 69, "\(store)")
            #expect(store.stderr.contains("no graphical session here where a person could answer it"), "\(store.stderr)")
            #expect(store.elapsed < .seconds(5), "\(store.elapsed)")
            #expect(provider.providerEvents.contains("dismissed"), "the prompt was left open: \(provider.providerEvents)")
            #expect(!Paths.exists(sb.slotFile(name)), "no fallback to the device slot")
            #expect(!Paths.exists("\(sb.configFolder)/modes.json"), "nothing was recorded for a store that did not happen")
        }
    }

    /// With a display, vaultctl says what to answer, waits up to the bound, then dismisses the prompt.
    @Test func withADisplayItSaysWhatToAnswerAndGivesUpAfterTheBound() throws {
        try scripted(.scriptedPromptSilent) { provider, sb in
            let store = try sb.vaultctl(["store", sb.uniqueSlot("display"), "--mode", "sync"], stdin: .text("v"),
                                        overriding: ["DISPLAY": ":97", "VAULTCTL_PROMPT_SECONDS": "2"])
            #expect(store.status == 69, "\(store)")
            #expect(store.stderr.contains("answer it on your screen (vaultctl waits up to 2 s)"), "\(store.stderr)")
            #expect(store.stderr.contains("nobody answered the provider's prompt to store the item 'vaultctl: "), "\(store.stderr)")
            #expect(store.elapsed >= .seconds(2) && store.elapsed < Self.bound, "\(store.elapsed)")
            #expect(provider.providerEvents.contains("dismissed"), "\(provider.providerEvents)")
        }
    }

    @Test func aDismissedPromptIsRefused() throws {
        try scripted(.scriptedPromptDismissed) { _, sb in
            let store = try sb.vaultctl(["store", sb.uniqueSlot("dismissed"), "--mode", "sync"], stdin: .text("v"))
            #expect(store.status == 69, "\(store)")
            #expect(store.stderr.contains("was dismissed"), "\(store.stderr)")
        }
    }

    /// A person who answers the provider's access prompt gets the value: after PAM, the prompt, then the read.
    @Test func anAnsweredUnlockPromptLetsTheReadThrough() throws {
        try scripted(.scriptedItemLockedAllow) { provider, sb in
            let read = try sb.vaultctl(["read", sb.uniqueSlot("allowed")], overriding: ["DISPLAY": ":97", "VAULTCTL_PROMPT_SECONDS": "5"])
            #expect(read.status == 0 && read.stdoutText == "allowed-secret", "\(read)")
            // Its prompt completed at once: nobody is sent to look for a dialog that never showed (issue 25,
            // point 7); a prompt that waits for a person is announced (withADisplayItSaysWhatToAnswer...).
            #expect(!read.stderr.contains("answer it on your screen"), "\(read.stderr)")
            #expect(provider.providerEvents.contains("prompted") && provider.providerEvents.contains("secret"), "\(provider.providerEvents)")
        }
    }

    /// An item behind the provider's access confirmation: status says where it is and runs no prompt. Without
    /// a display read refuses before the password prompt; with one it asks the provider to unlock the item
    /// after PAM (its prompt, bounded) and refuses when nobody answers.
    @Test func aLockedItemIsInSlotForStatusAndReadRunsItsUnlockPrompt() throws {
        try scripted(.scriptedItemLocked) { provider, sb in
            let name = sb.uniqueSlot("confirm")
            let status = try sb.vaultctl(["status", name])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
            let list = try sb.vaultctl(["list"])
            #expect(list.status == 0, "\(list)")
            #expect(!provider.providerEvents.contains("unlock") && !provider.providerEvents.contains("prompted"),
                    "status and list ran a prompt: \(provider.providerEvents)")

            let headless = try sb.read(name)
            #expect(headless.status == 69 && headless.stderr.contains("locked"), "\(headless)")
            #expect(!provider.providerEvents.contains("unlock"), "\(provider.providerEvents)")

            let read = try sb.vaultctl(["read", name], overriding: ["DISPLAY": ":97", "VAULTCTL_PROMPT_SECONDS": "2"])
            read.expectFailure(69, saying: "nobody answered the provider's prompt to unlock slot '\(name)' for reading")
            #expect(read.elapsed < Self.bound)
            #expect(provider.providerEvents.contains("prompted") && provider.providerEvents.contains("dismissed"),
                    "\(provider.providerEvents)")
        }
    }
}
