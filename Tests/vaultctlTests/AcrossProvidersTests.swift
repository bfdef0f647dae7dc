#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// KeePassXC with every database locked (issue 36, point 6): `status` and `list` read the collections'
/// `Locked` first and never make it show its unlock dialog.
@Suite("Across providers")
struct AcrossProvidersTests {
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
            let locked = ProcessRunner.run(Paths.tool("gdbus"), [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", collection,
                "--method", "org.freedesktop.DBus.Properties.Get", "org.freedesktop.Secret.Collection", "Locked",
            ], environment: provider.clientEnvironment, timeout: .seconds(15))
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
