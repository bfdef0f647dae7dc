import Foundation
import Testing
import TestSupport

/// `list` and `list --json` show names and modes, never secret bytes.
@Suite("Listing slots", .tags(.needsServices))
struct ListTests {
    /// Stores one device and one sync slot with distinctive secrets; returns names and secrets.
    private func storeBoth(_ sb: Sandbox) throws -> [(name: String, mode: String, secret: [UInt8])] {
        let device = sb.uniqueSlot("list-dev")
        let sync = sb.uniqueSlot("list-sync")
        let slots = [(device, "device", TestData.textSecret(device)), (sync, "sync", TestData.textSecret(sync))]
        for (name, mode, secret) in slots { try sb.store(name, secret, mode: mode) }
        return slots.map { (name: $0.0, mode: $0.1, secret: $0.2) }
    }

    @Test func listNeverPrintsSecrets() throws {
        let sb = try Sandbox()
        let slots = try storeBoth(sb)
        let r = try sb.vaultctl(["list"])
        #expect(r.status == 0, "\(r)")
        for slot in slots {
            #expect(r.stdoutText.contains("\(slot.name)\t\(slot.mode)\n"), "\(r.stdoutText)")
            #expect(!r.stdout.contains(bytes: slot.secret))
            #expect(!r.stderr.contains(String(decoding: slot.secret, as: UTF8.self)))
        }
    }

    @Test func listJSONIsValidAndHasNoSecrets() throws {
        let sb = try Sandbox()
        let slots = try storeBoth(sb)
        let r = try sb.vaultctl(["list", "--json"])
        #expect(r.status == 0, "\(r)")
        for slot in slots {
            #expect(!r.stdout.contains(bytes: slot.secret))
        }
        let document = try JSONSerialization.jsonObject(with: Data(r.stdout))
        let object = try #require(document as? [String: Any], "\(r.stdoutText)")
        let entries = try #require(object["slots"] as? [[String: Any]], "\(r.stdoutText)")
        #expect(object["syncError"] is NSNull, "\(r.stdoutText)")
        #expect(object["lockedCollections"] as? [String] == [], "nothing locked: \(r.stdoutText)")
        #expect(!r.stderr.contains("warning"), "\(r.stderr)")
        for slot in slots {
            let matching = entries.filter { $0["slot"] as? String == slot.name }
            #expect(matching.count == 1, "\(r.stdoutText)")
            #expect(matching.first?["mode"] as? String == slot.mode)
        }
        for entry in entries {
            #expect(Set(entry.keys) == ["slot", "mode"], "only names and modes: \(entry)")
        }
    }

    @Test func listJSONReportsUnreachableSecretService() throws {
        let bus = try SecretServiceInstance.start(.busOnly)
        defer { bus.stop() }
        let sb = try Sandbox(bus)
        let name = sb.uniqueSlot("json-nosvc")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.vaultctl(["list", "--json"])
        #expect(r.status == 0, "\(r)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(object["syncError"] is String, "\(r.stdoutText)")
        let entries = try #require(object["slots"] as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries.first?["slot"] as? String == name)
        #expect(entries.first?["mode"] as? String == "device")
    }

    @Test func listOfEmptyVaultPrintsNothingForThisSandbox() throws {
        let sb = try Sandbox(busAddress: "unix:path=/nonexistent")
        let r = try sb.vaultctl(["list", "--json"])
        #expect(r.status == 0, "\(r)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect((object["slots"] as? [Any])?.isEmpty == true, "\(r.stdoutText)")
        #expect(sb.wroteNothing, "list creates no folders")
    }
}
