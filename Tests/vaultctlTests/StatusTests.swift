import Foundation
import Testing
import TestSupport

/// `vaultctl status SLOT [--verbose] [--json]`: says where a secret is, as far as vaultctl can know, without ever
/// prompting or touching PAM. Every status here runs with no pam_wrapper variables and no VAULT_ASKPASS
/// (and no terminal), so a command that tried to authenticate could not succeed.
@Suite("status: where a secret is", .tags(.needsServices))
struct StatusTests {
    static let states: Set<String> = ["in-slot", "cannot-leave-device", "on-this-device", "unknown", "none"]
    static let forbiddenWords = ["synced", "backed up"]
    static let noBus = "unix:path=/nonexistent"

    /// Words a status must never use, whatever the state: vaultctl cannot know that a value was synced or
    /// backed up.
    static func expectHonest(_ doc: StatusDocument, sourceLocation: SourceLocation = #_sourceLocation) {
        for word in forbiddenWords {
            #expect(!doc.message.lowercased().contains(word), "\(doc.state) message says \(word.debugDescription): \(doc.message)",
                    sourceLocation: sourceLocation)
        }
        #expect(states.contains(doc.state), "unknown state \(doc.state)", sourceLocation: sourceLocation)
        // A status never asserts what its own explanation denies: "cannot leave" only where a TPM guarantees it.
        if doc.state != "cannot-leave-device" {
            #expect(!doc.message.contains("cannot leave this device"), "\(doc.state): \(doc.message)", sourceLocation: sourceLocation)
        }
        #expect(doc.keys.isSuperset(of: ["slot", "state", "mode", "message"]), "\(doc)", sourceLocation: sourceLocation)
        #expect(!doc.message.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func syncValueIsInSlotNamingTheCollectionLabel() throws {
        let sb = try Sandbox()
        let label = try Fixtures.sharedKeyring.get().defaultCollectionLabel()
        let name = sb.uniqueSlot("st-sync")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: "sync")

        let doc = try sb.status(name)
        #expect(doc.slot == name)
        #expect(doc.state == "in-slot", "\(doc)")
        #expect(doc.mode == "sync", "\(doc)")
        #expect(doc.message.contains("'\(label)'"), "names the collection by its label \(label.debugDescription): \(doc.message)")
        #expect(doc.message.contains("provider"), "says delivery depends on the provider: \(doc.message)")
        #expect(doc.message.contains("cannot confirm") || doc.message.contains("not confirmed"),
                "says delivery is not confirmed: \(doc.message)")
        #expect(!doc.text.contains(String(decoding: secret, as: UTF8.self)), "never the secret")
        Self.expectHonest(doc)

        // Without --json: the state and one sentence, which names the collection; nothing qualifies it here,
        // so that is all. What it means comes with --verbose.
        let plain = sb.vaultctlWithoutPAM(["status", name])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdoutText == "in-slot: \(doc.summary)\n", "\(plain.stdoutText)")
        #expect(plain.stdoutText.contains("'\(label)'"))
        #expect(!plain.stdoutText.lowercased().contains("synced") && !plain.stdoutText.lowercased().contains("backed up"))
        let verbose = sb.vaultctlWithoutPAM(["status", name, "--verbose"])
        #expect(verbose.stdoutText.hasPrefix(plain.stdoutText) && verbose.stdoutText.contains("\n  Whether it reaches your other devices depends on the provider"), "\(verbose.stdoutText)")
    }

    /// The layout (issue 36, point 9): `STATE: one sentence` first, then indented lines; with --verbose more
    /// lines, never another first line; the JSON `message` holds every line's words, in order.
    @Test func theFirstLineIsTheStateAndOneSentence() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-layout")
        try sb.store(name, TestData.textSecret(name), mode: "device")
        let unsure = ["DBUS_SESSION_BUS_ADDRESS": Self.noBus]

        let plain = sb.vaultctlWithoutPAM(["status", name], overriding: unsure)
        let verbose = sb.vaultctlWithoutPAM(["status", name, "--verbose"], overriding: unsure)
        let doc = try sb.status(name, overriding: unsure)
        let lines = plain.stdoutText.split(separator: "\n").map(String.init)
        let verboseLines = verbose.stdoutText.split(separator: "\n").map(String.init)
        #expect(plain.status == 0 && verbose.status == 0, "\(plain) \(verbose)")
        #expect(lines.first == "on-this-device: Slot '\(name)' is in the device slot on this machine.", "\(lines)")
        // A copy in the Secret Service that could not be ruled out changes what to do: said without --verbose.
        #expect(lines.dropFirst().contains { $0.hasPrefix("  A copy in the Secret Service is not ruled out") }, "\(lines)")
        // What binds the key is what the state means: --verbose.
        #expect(!plain.stdoutText.contains("/etc/machine-id"), "\(plain.stdoutText)")
        #expect(verboseLines.first == lines.first && Array(verboseLines.prefix(lines.count)) == lines, "\(verboseLines)")
        #expect(verboseLines.count > lines.count && verboseLines.dropFirst().allSatisfy { $0.hasPrefix("  ") } && verbose.stdoutText.contains("/etc/machine-id"), "\(verboseLines)")
        let words = verboseLines.enumerated().map { $0.offset == 0 ? String($0.element.dropFirst("on-this-device: ".count)) : String($0.element.dropFirst(2)) }
        #expect(doc.message == words.joined(separator: " "), "\(doc.message)")
        #expect(doc.text.contains("\"summary\":\"Slot '\(name)' is in the device slot on this machine.\""), "\(doc)")
        // Never a sentence and its contradiction: not "not in the Secret Service" beside "not ruled out".
        #expect(!verbose.stdoutText.contains("not in the Secret Service"), "\(verbose.stdoutText)")
    }

    @Test func deviceValueWithoutATPMIsOnThisDevice() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-device")
        try sb.store(name, TestData.binarySecret(name), mode: "device")
        let doc = try sb.status(name)
        #expect(doc.slot == name)
        #expect(doc.state == "on-this-device", "\(doc)")
        #expect(doc.mode == "device", "\(doc)")
        Self.expectHonest(doc)
    }

    @Test func neverStoredIsNone() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-none")
        let doc = try sb.status(name)
        #expect(doc.slot == name)
        #expect(doc.state == "none", "\(doc)")
        #expect(doc.mode == nil, "\(doc)")
        #expect(sb.wroteNothing, "status creates no folders")
        Self.expectHonest(doc)
    }

    /// One slot walked through all four states: each message is different, and none says synced or backed up.
    @Test func everyStateHasItsOwnHonestMessage() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-all")
        var messages: [String: String] = [:]

        let none = try sb.status(name)
        #expect(none.state == "none", "\(none)")
        messages[none.state] = none.message

        try sb.store(name, TestData.textSecret(name), mode: "device")
        let device = try sb.status(name)
        #expect(device.state == "on-this-device", "\(device)")
        messages[device.state] = device.message

        try sb.store(name, TestData.textSecret(name), mode: "sync")  // moves it: the device copy goes
        let sync = try sb.status(name)
        #expect(sync.state == "in-slot", "\(sync)")
        messages[sync.state] = sync.message

        let unknown = try sb.status(name, overriding: ["DBUS_SESSION_BUS_ADDRESS": Self.noBus])
        #expect(unknown.state == "unknown", "\(unknown)")
        messages[unknown.state] = unknown.message

        for doc in [none, device, sync, unknown] { Self.expectHonest(doc) }
        #expect(messages.count == 4, "\(messages)")
        #expect(Set(messages.values).count == 4, "the messages of the states differ: \(messages)")
    }

    /// (a) A new machine: the config folder came back (its record says device), the state folder is empty
    /// and so is the keyring. Nothing holds the value: none, and read is 66.
    @Test func newMachineWithRestoredConfigIsNone() throws {
        let old = try Sandbox()
        let name = old.uniqueSlot("st-newmachine")
        try old.store(name, TestData.textSecret(name), mode: "device")
        let record = FileText.read("\(old.configFolder)/modes.json") ?? ""
        try #require(record.contains(name) && record.contains("device"), "the record says device: \(record)")

        let keyring = try SecretServiceInstance.start(.unlocked)
        defer { keyring.stop() }
        let fresh = try Sandbox(keyring)
        try Sandbox.copyFolder(old.configFolder, into: fresh.configHome)
        try #require(FileText.read("\(fresh.configFolder)/modes.json") == record)
        #expect(!Paths.exists(fresh.stateFolder), "the new machine's state folder is empty")

        let doc = try fresh.status(name)
        #expect(doc.state == "none", "\(doc)")
        #expect(doc.mode == nil, "\(doc)")
        Self.expectHonest(doc)

        let r = try fresh.read(name)
        r.expectFailure(66)
    }

    /// (b) The record says sync but the value is in the device slot: status believes the slots, not the record.
    @Test func recordSayingSyncDoesNotHideDeviceValue() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-record")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: "device")
        let path = "\(sb.configFolder)/modes.json"
        let record = try #require(FileText.read(path))
        let edited = record.replacingOccurrences(of: "\"\(name)\" : \"device\"", with: "\"\(name)\" : \"sync\"")
        try #require(edited != record, "could not find the slot's entry in \(record)")
        try #require(FileText.write(path, edited))

        let doc = try sb.status(name)
        #expect(doc.state == "on-this-device", "\(doc)")
        #expect(doc.mode == "device", "\(doc)")
        Self.expectHonest(doc)
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "and nothing appeared in the keyring")
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret)
    }

    enum Unreachable: String, CaseIterable, Sendable {
        /// `DBUS_SESSION_BUS_ADDRESS` points at a socket that does not exist.
        case noBus
        /// A session bus with no Secret Service provider on it.
        case busOnly
    }

    private func unreachableAddress(_ kind: Unreachable) throws -> (String, SecretServiceInstance?) {
        switch kind {
        case .noBus: return (Self.noBus, nil)
        case .busOnly:
            let bus = try SecretServiceInstance.start(.busOnly)
            return (bus.busAddress, bus)
        }
    }

    /// (c) The value is in the keyring, but the keyring cannot be asked: unknown, never none.
    @Test(arguments: Unreachable.allCases)
    func syncValueWithProviderUnreachableIsUnknown(_ kind: Unreachable) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-unreach-\(kind.rawValue)")
        try sb.store(name, TestData.textSecret(name), mode: "sync")
        let (address, bus) = try unreachableAddress(kind)
        defer { bus?.stop() }

        let doc = try sb.status(name, overriding: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(doc.state == "unknown", "\(kind): \(doc)")
        #expect(doc.state != "none")
        #expect(doc.mode == nil, "\(doc)")
        #expect(doc.message.contains("may still be in the keyring"), "\(kind): \(doc.message)")
        Self.expectHonest(doc)

        // And once the keyring answers again, it is there.
        #expect(try sb.status(name).state == "in-slot")
    }

    /// (c) Device slot empty and keyring unreachable: unknown too (it could be in the keyring).
    @Test(arguments: Unreachable.allCases)
    func emptyDeviceWithProviderUnreachableIsUnknown(_ kind: Unreachable) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("st-unreach-empty-\(kind.rawValue)")
        let (address, bus) = try unreachableAddress(kind)
        defer { bus?.stop() }

        let doc = try sb.status(name, overriding: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(doc.state == "unknown", "\(kind): \(doc)")
        #expect(doc.mode == nil, "\(doc)")
        Self.expectHonest(doc)
    }

    /// (d) A locked collection still holds the value: status says in-slot, while read is 69 "locked".
    @Test func lockedCollectionIsInSlotWhileReadIs69() throws {
        let keyring = try SecretServiceInstance.start(.unlocked)
        defer { keyring.stop() }
        let label = try keyring.defaultCollectionLabel()
        let sb = try Sandbox(keyring)
        let name = sb.uniqueSlot("st-locked")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret, mode: "sync")
        let lock = keyring.lockLoginCollection()
        try #require(lock.status == 0, "locking the collection failed: \(lock)")

        let doc = try sb.status(name)
        #expect(doc.state == "in-slot", "\(doc)")
        #expect(doc.mode == "sync", "\(doc)")
        #expect(doc.message.contains("'\(label)'"), "\(doc.message)")
        Self.expectHonest(doc)

        let r = try sb.read(name)
        r.expectFailure(69, saying: "locked")
        #expect(!r.stderr.contains(String(decoding: secret, as: UTF8.self)))
    }
}
