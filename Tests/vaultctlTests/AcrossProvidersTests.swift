#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// One vault seen from two Secret Service providers (issue 36, point 6): a value stored in the sync slot under
/// gnome-keyring, then looked at in a session whose Secret Service is KeePassXC (the same state and config
/// folders, another bus). And KeePassXC with every database locked: `status` and `list` read the collections'
/// `Locked` first and never make it show its unlock dialog.
@Suite("Across providers", .tags(.needsServices))
struct AcrossProvidersTests {
    /// gnome-keyring (the shared keyring) holds it; KeePassXC, running now, does not. Status says so and names
    /// the provider running now, list says so, and a store there says in one line that it makes a new value.
    @Test func aSyncValueInGnomeKeyringIsNamedAsElsewhereUnderKeePassXC() throws {
        let sb = try Sandbox()
        let keepassxc = try SecretServiceInstance.start(.keepassxc)
        defer { keepassxc.stop() }
        let there = ["DBUS_SESSION_BUS_ADDRESS": keepassxc.busAddress]
        let name = sb.uniqueSlot("github")
        try sb.store(name, Array("from gnome-keyring".utf8), mode: "sync")

        // Under gnome-keyring: there, as always.
        let home = sb.vaultctlWithoutPAM(["status", name])
        #expect(home.status == 0 && home.stdoutText.hasPrefix("in-slot: ") && !home.stdoutText.contains("another keyring"), "\(home)")

        // Under KeePassXC: none here, with the provider that answered and where else it may be.
        let status = sb.vaultctlWithoutPAM(["status", name], overriding: there)
        let lines = status.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(status.status == 0 && status.stderr.isEmpty, "\(status)")
        #expect(lines.first == "none: Slot '\(name)' is not in the Secret Service running now (KeePassXC, 'vaultctl test'); recorded as stored in the sync slot — another keyring?", "\(status.stdoutText)")
        let doc = try sb.status(name, overriding: there)
        #expect(doc.state == "none" && doc.mode == nil, "\(doc)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(doc.text.utf8)) as? [String: Any])
        #expect(object["recorded"] as? String == "sync" && (object["summary"] as? String)?.contains("another keyring?") == true, "\(doc)")

        // list: not a line of its own on stdout (it is not there), but named on stderr, and in --json.
        let list = sb.vaultctlWithoutPAM(["list"], overriding: there)
        #expect(list.status == 0 && !list.stdoutText.contains(name), "\(list)")
        #expect(list.stderr.contains("vaultctl: warning: slot '\(name)' is not in the Secret Service running now (KeePassXC, 'vaultctl test'); recorded as stored in the sync slot — another keyring? ('vaultctl status \(name)' says more.)"), "\(list.stderr)")
        let listJSON = sb.vaultctlWithoutPAM(["list", "--json"], overriding: there)
        #expect(listJSON.stdoutText.contains("\"recordedNotHeld\":[\"\(name)\"]"), "\(listJSON)")
        // Under gnome-keyring, list names nothing of the kind.
        let homeList = sb.vaultctlWithoutPAM(["list", "--json"])
        #expect(homeList.stdoutText.contains("\"recordedNotHeld\":[]") && !homeList.stderr.contains("another keyring"), "\(homeList)")

        // A store under KeePassXC: a new value there, said in one line; gnome-keyring's copy stays.
        let store = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("from KeePassXC"), overriding: there)
        #expect(store.status == 0, "\(store)")
        let said = store.stderr.split(separator: "\n").filter { $0.contains("another keyring") }
        #expect(said == ["vaultctl: warning: slot '\(name)' is not in the Secret Service running now (KeePassXC, 'vaultctl test'); recorded as stored in the sync slot — another keyring? This is a new value; a copy in another keyring, if any, stays there."], "\(store.stderr)")
        #expect(sb.secretToolLookup(name).stdoutText == "from gnome-keyring", "the other keyring's copy is left alone")
        let after = sb.vaultctlWithoutPAM(["status", name], overriding: there)
        #expect(after.stdoutText.hasPrefix("in-slot: ") && after.stdoutText.contains("'vaultctl test'"), "\(after)")

        // A second store there replaces its own value and says nothing of another keyring.
        let again = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("again"), overriding: there)
        #expect(again.status == 0 && !again.stderr.contains("another keyring"), "\(again)")
        _ = sb.secretTool(["clear", "xdg:schema", "org.vaultctl.Slot", "slot", name])
    }

    /// read, move and delete of such a slot under KeePassXC say what status says (66), never "empty"; delete
    /// removes the record's entry (list names it no more) and leaves gnome-keyring's copy, which reads there.
    @Test func readMoveAndDeleteUnderKeePassXCSayWhatStatusSays() throws {
        let sb = try Sandbox()
        let keepassxc = try SecretServiceInstance.start(.keepassxc)
        defer { keepassxc.stop() }
        let there = ["DBUS_SESSION_BUS_ADDRESS": keepassxc.busAddress]
        let name = sb.uniqueSlot("elsewhere")
        try sb.store(name, Array("from gnome-keyring".utf8), mode: "sync")
        defer { _ = sb.secretTool(["clear", "xdg:schema", "org.vaultctl.Slot", "slot", name]) }
        let sentence = "Slot '\(name)' is not in the Secret Service running now (KeePassXC, 'vaultctl test'); recorded as stored in the sync slot — another keyring?"

        for args in [["read", name], ["move", name, "--to", "device"], ["move", name, "--to", "sync"]] {
            let r = try sb.vaultctl(args, overriding: there)
            #expect(r.status == 66 && r.stdoutText.isEmpty, "\(args): \(r)")
            #expect(r.stderr.contains("vaultctl: \(sentence) 'vaultctl store \(name)' here makes a new value; a copy in another keyring, if any, stays there.") && !r.stderr.contains("empty"), "\(args): \(r.stderr)")
        }
        let delete = try sb.vaultctl(["delete", name], overriding: there)
        #expect(delete.status == 66, "\(delete)")
        #expect(delete.stderr.contains("vaultctl: \(sentence) Nothing was deleted here; the record of '\(name)' in the sync slot is removed; a copy in another keyring, if any, stays there.") && !delete.stderr.contains("holds no value"), "\(delete.stderr)")
        #expect(sb.secretToolLookup(name).stdoutText == "from gnome-keyring", "the other keyring's copy is left alone")
        let list = sb.vaultctlWithoutPAM(["list", "--json"], overriding: there)
        #expect(list.stdoutText.contains("\"recordedNotHeld\":[]") && !list.stderr.contains("another keyring"), "the entry is gone: \(list)")
        let again = try sb.vaultctl(["delete", name], overriding: there)
        #expect(again.status == 66 && again.stderr.contains("Slot '\(name)' holds no value; nothing was deleted.") && !again.stderr.contains("another keyring"), "\(again)")
        // Under gnome-keyring the value still reads, the record's entry gone.
        let home = try sb.vaultctl(["read", name])
        #expect(home.status == 0 && home.stdoutText == "from gnome-keyring", "\(home)")
    }

    /// KeePassXC with its database locked, on a display where it would show its unlock dialog ("Prompt to
    /// unlock database before searching", on by default): status and list answer at once, say "locked", and
    /// no dialog appears. The check that no dialog appears is shown to work: the search the old vaultctl made
    /// (`Service.SearchItems`) does bring it up.
    @Test func aLockedKeePassXCDatabaseIsSaidLockedWithoutAnUnlockDialog() throws {
        let x = try VirtualX11()
        let provider = try SecretServiceInstance.start(.keepassxc, display: x.display)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let name = sb.uniqueSlot("kpxc-locked")
        try sb.store(name, TestData.textSecret(name), mode: "sync")
        try Self.lockDatabase(provider)
        let onScreen = ["DISPLAY": x.display]

        let status = sb.vaultctlWithoutPAM(["status", name], overriding: onScreen)
        #expect(status.status == 0 && status.elapsed < .seconds(3), "\(status)")
        #expect(status.stdoutText.hasPrefix("unknown: ") && status.stdoutText.contains("locked"), "\(status.stdoutText)")
        #expect(!status.stdoutText.contains("did not answer") && !status.stdoutText.contains("session bus"), "no blame on the bus: \(status.stdoutText)")
        let list = sb.vaultctlWithoutPAM(["list"], overriding: onScreen)
        #expect(list.status == 0 && list.elapsed < .seconds(3), "\(list)")
        #expect(list.stderr.contains("locked") && !list.stderr.contains("did not answer"), "\(list.stderr)")
        #expect(!Self.unlockDialogAppears(on: x.display, within: 2), "status and list made KeePassXC show its unlock dialog")

        // The control: a search across every collection, as vaultctl made before, makes it show the dialog.
        let search = ProcessRunner.run(Paths.tool("sh"), ["-c", """
            timeout 10 gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
              --method org.freedesktop.Secret.Service.SearchItems "{'slot': '\(name)'}" >/dev/null 2>&1 </dev/null & echo $!
            """], environment: provider.clientEnvironment)
        defer { if let pid = pid_t(search.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(pid, SIGTERM) } }
        #expect(Self.unlockDialogAppears(on: x.display, within: 10), "the control search should bring up KeePassXC's unlock dialog")
    }

    /// Locks KeePassXC's database through the Secret Service (`Lock`, then its prompt, which completes without
    /// a dialog), and waits until the collection says it is locked.
    static func lockDatabase(_ provider: SecretServiceInstance) throws {
        let collection = "/org/freedesktop/secrets/collection/db"
        let lock = ProcessRunner.run(Paths.tool("gdbus"), [
            "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
            "--method", "org.freedesktop.Secret.Service.Lock", "['\(collection)']",
        ], environment: provider.clientEnvironment, timeout: .seconds(15))
        try #require(lock.status == 0, "\(lock)")
        if let range = lock.stdoutText.range(of: "/org/freedesktop/secrets/prompt/[0-9a-zA-Z_]+", options: .regularExpression) {
            let prompt = ProcessRunner.run(Paths.tool("gdbus"), [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", String(lock.stdoutText[range]),
                "--method", "org.freedesktop.Secret.Prompt.Prompt", "",
            ], environment: provider.clientEnvironment, timeout: .seconds(15))
            try #require(prompt.status == 0, "\(prompt)")
        }
        for _ in 0..<100 {
            let locked = CollectionProperty.read("Locked", of: collection, environment: provider.clientEnvironment)
            if locked.stdoutText.contains("true") { return }
            usleep(50_000)
        }
        throw SetupError(description: "KeePassXC's database did not lock")
    }

    /// Whether KeePassXC's unlock dialog ("Unlock Database - KeePassXC") is shown on `display` within
    /// `seconds`.
    static func unlockDialogAppears(on display: String, within seconds: Int) -> Bool {
        let r = ProcessRunner.run(Paths.tool("sh"), ["-c", "timeout \(seconds) xdotool search --sync --onlyvisible --name 'Unlock Database' </dev/null"],
                                  environment: Fixtures.baseEnvironment.merging(["DISPLAY": display]) { $1 },
                                  timeout: .seconds(seconds + 10))
        return r.status == 0 && !r.stdoutText.isEmpty
    }
}
