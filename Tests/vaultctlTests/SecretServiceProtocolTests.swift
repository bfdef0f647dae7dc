import Testing
import TestSupport

/// What vaultctl does when the peer on the bus misbehaves: each provider case is a real service object on a
/// private dbus-daemon (`scripts/fake-secret-service.py`), each bus-level case a byte-level peer
/// (`RawBusPeer`). vaultctl must answer with the right exit code and words, within seconds, and never read a
/// failure as "empty". (The same client against a real gnome-keyring is in the other suites.)
@Suite("Secret Service protocol failures", .tags(.needsServices))
struct SecretServiceProtocolTests {
    static let bound: Duration = .seconds(15)

    /// A scripted provider on its own bus, stopped after `body`.
    private func scripted(_ kind: SecretServiceInstance.Kind, _ body: (Sandbox) throws -> Void) throws {
        let provider = try SecretServiceInstance.start(kind)
        defer { provider.stop() }
        try body(try Sandbox(provider))
    }

    @Test func refusedCredentialsAreUnavailableNotEmpty() throws {
        let bus = try RawBusPeer(.rejectCredentials)
        let sb = try Sandbox(busAddress: bus.address)
        let name = sb.uniqueSlot("rejected")
        let status = try sb.vaultctl(["status", name])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("refused vaultctl's credentials"), "\(status)")
        let read = try sb.read(name)
        #expect(read.status == 69, "\(read)")
        #expect(read.elapsed < Self.bound)
    }

    /// A provider that offers only the `plain` algorithm: vaultctl never sends a secret unencrypted.
    @Test func aProviderWithoutEncryptedTransferIsRefused() throws {
        try scripted(.scriptedPlainOnly) { sb in
            let name = sb.uniqueSlot("plain")
            let read = try sb.read(name)
            #expect(read.status == 69, "\(read)")
            #expect(read.stderr.contains("does not offer the encrypted transfer"), "\(read.stderr)")
            #expect(read.stdout.isEmpty)
            let store = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("not-to-be-sent-in-clear"))
            #expect(store.status == 69, "\(store)")
            #expect(store.stderr.contains("does not offer the encrypted transfer"), "\(store.stderr)")
        }
    }

    @Test func anInvalidServerKeyIsRefused() throws {
        try scripted(.scriptedBadKey) { sb in
            let read = try sb.read(sb.uniqueSlot("badkey"))
            #expect(read.status == 69, "\(read)")
            #expect(read.stderr.contains("key exchange is not valid"), "\(read.stderr)")
        }
    }

    /// An error reply is "could not look", in the provider's words kept to one line.
    @Test func anErrorReplyIsUnknownInOneLine() throws {
        try scripted(.scriptedErrorReply) { sb in
            let name = sb.uniqueSlot("denied")
            let status = try sb.vaultctl(["status", name])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
            #expect(status.stdoutText.contains("denied by the fake provider"), "\(status)")
            // The provider's words stay on the state's line; the lines after it are vaultctl's own, indented.
            let lines = status.stdoutText.split(separator: "\n")
            #expect(lines.first?.contains("denied by the fake provider") == true && lines.dropFirst().allSatisfy { $0.hasPrefix("  ") }, "\(status)")
            let delete = try sb.vaultctl(["delete", name])
            #expect(delete.status == 69, "could not look, so not 'empty': \(delete)")
        }
    }

    /// `lock` says the collection is locked only when the provider's Lock answer lists it.
    @Test(arguments: [SecretServiceInstance.Kind.scriptedLockIgnored, .scriptedLockListed])
    func lockSaysTheCollectionIsLockedOnlyWhenTheProviderSaysSo(_ kind: SecretServiceInstance.Kind) throws {
        try scripted(kind) { sb in
            let lock = try sb.vaultctl(["lock"])
            #expect(lock.status == 0, "the vault itself is locked either way: \(lock)")
            if kind == .scriptedLockIgnored {
                #expect(lock.stderr.contains("the Secret Service collection was not locked"), "\(lock.stderr)")
                #expect(lock.stderr.contains("did not say it locked the collection"), "\(lock.stderr)")
            } else {
                #expect(lock.stderr.contains("and so is the Secret Service collection 'Fake'; 'vaultctl unlock' unlocks both"), "\(lock.stderr)")
            }
        }
    }

    /// `unlock` undoes what `lock` did to the keyring: after PAM it asks the provider to unlock the collection
    /// that `lock` locked, and only that; a second `lock` of a locked collection leaves it to the person.
    @Test func unlockUnlocksTheCollectionThatLockLocked() throws {
        let provider = try SecretServiceInstance.start(.scriptedLockListed)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        #expect(try sb.vaultctl(["lock"]).status == 0)
        let again = try sb.vaultctl(["lock"])
        #expect(again.stderr.contains("was locked already"), "\(again.stderr)")
        let unlock = try sb.vaultctl(["unlock"])
        #expect(unlock.status == 0, "\(unlock)")
        #expect(unlock.stderr.contains("the vault is unlocked, and so is the Secret Service collection 'Fake'"), "\(unlock.stderr)")
        #expect(provider.providerEvents.filter { $0 == "unlock" }.count == 1, "\(provider.providerEvents)")
        let second = try sb.vaultctl(["unlock"])
        #expect(second.status == 0, "\(second)")
        #expect(provider.providerEvents.filter { $0 == "unlock" }.count == 1, "unlock asked again: \(provider.providerEvents)")
    }

    @Test func aMessageCutShortIsUnavailable() throws {
        let bus = try RawBusPeer(.cutShort)
        let sb = try Sandbox(busAddress: bus.address)
        let status = try sb.vaultctl(["status", sb.uniqueSlot("cut")])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("closed the connection"), "\(status)")
        #expect(status.elapsed < Self.bound)
    }

    /// A provider that answers the first call and then never again: every operation gives up within the
    /// timeout, on a bus that itself still answers.
    @Test func aProviderThatStopsAnsweringIsUnavailableWithinTheTimeout() throws {
        try scripted(.scriptedSilentAfterAlias) { sb in
            let name = sb.uniqueSlot("mute")
            let status = try sb.vaultctl(["status", name])
            #expect(status.status == 0 && status.stdoutText.contains("did not answer within 5 s"), "\(status)")
            #expect(status.elapsed < Self.bound)
            let read = try sb.read(name)
            #expect(read.status == 69, "\(read)")
            #expect(read.elapsed < Self.bound)
        }
    }

    /// A provider that exits in the middle of a call (as gnome-keyring 42.1 does when it crashes): the bus says
    /// so at once (its NoReply), and vaultctl says the provider stopped, instead of waiting out its timeout or
    /// calling it one.
    @Test func aProviderThatExitsMidCallIsUnavailableAtOnceAndSaysTheProviderStopped() throws {
        try scripted(.scriptedExitMidCall) { sb in
            let status = try sb.vaultctl(["status", sb.uniqueSlot("exits")])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
            #expect(status.stdoutText.contains("the Secret Service provider stopped (crashed?) during the call"), "\(status)")
            #expect(!status.stdoutText.contains("did not answer within"), "\(status)")
            #expect(status.elapsed < .seconds(4), "\(status.elapsed)")
        }
    }

    /// A found item in an unlocked collection is "in-slot", named by the provider's labels.
    @Test func aFoundItemIsInSlotWithTheProvidersLabels() throws {
        try scripted(.scriptedProvider) { sb in
            let status = try sb.vaultctl(["status", sb.uniqueSlot("labels")])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
            #expect(status.stdoutText.contains("collection 'Fake' as item 'Fake'"), "\(status)")
        }
    }

    /// gnome-keyring's first-call race: the alias that rides in front of the first search answers "/", so
    /// that search's "nothing" is not believed: the alias is resolved on its own and the search asked again.
    @Test func aSearchAnsweredBeforeTheAliasResolvedIsAskedAgain() throws {
        let provider = try SecretServiceInstance.start(.scriptedAliasRace)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let status = try sb.vaultctl(["status", sb.uniqueSlot("race")])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
        let events = provider.providerEvents.filter { $0.hasPrefix("alias") || $0.hasPrefix("search") }
        #expect(events == ["alias 1", "search found 0", "alias 2", "search found 1"], "\(events)")
    }

    /// A read whose first search met the race still finds the item and decrypts its value.
    @Test func aReadWhoseFirstSearchRacedStillDecrypts() throws {
        let provider = try SecretServiceInstance.start(.scriptedAliasRace)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let r = try sb.read(sb.uniqueSlot("race-read"))
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText == "allowed-secret", "\(r)")
        #expect(provider.providerEvents.contains("search found 0"), "the race happened: \(provider.providerEvents)")
    }

    /// A locked collection whose search finds nothing (KeePassXC shows nothing of a locked database) cannot
    /// say the slot is empty.
    @Test func nothingFoundInALockedCollectionIsNotEmpty() throws {
        try scripted(.scriptedLockedEmpty) { sb in
            let name = sb.uniqueSlot("lockedempty")
            let status = try sb.vaultctl(["status", name])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
            #expect(status.stdoutText.contains("locked"), "\(status)")
            #expect(try sb.read(name).status == 69)
            let list = try sb.vaultctl(["list"])
            #expect(list.status == 0 && list.stderr.contains("locked"), "\(list)")
        }
    }
}
