import Testing

/// vaultctl against KeePassXC, the other common Secret Service provider, run headless on a database of the
/// test's own (`scripts/secret-service.sh start DIR keepassxc`). KeePassXC answers every `CreateItem` with a
/// prompt, even unlocked (it completes when run), and with its default "confirm access" shows every item
/// locked until the person allows vaultctl in its dialog.
@Suite("KeePassXC")
struct KeePassXCTests {
    static let bound: Duration = .seconds(15)

    private func keepassxc(_ kind: SecretServiceInstance.Kind = .keepassxc,
                           _ body: (SecretServiceInstance, Sandbox) throws -> Void) throws {
        let provider = try SecretServiceInstance.start(kind)
        defer { provider.stop() }
        try body(provider, try Sandbox(provider))
    }

    @Test func storeReadStatusListMoveAndDeleteWork() throws {
        try keepassxc { _, sb in
            let name = sb.uniqueSlot("kpxc")
            let secret = TestData.textSecret(name)
            try sb.store(name, secret, mode: "sync")
            let status = try sb.vaultctl(["status", name])
            #expect(status.stdoutText.hasPrefix("in-slot:") && status.stdoutText.contains("collection 'vaultctl test'"), "\(status)")
            #expect(try sb.listed()[name] == ["sync"])
            #expect(sb.secretToolLookup(name).stdout == secret, "secret-tool reads what vaultctl stored in KeePassXC")
            let read = try sb.read(name)
            #expect(read.status == 0 && read.stdout == secret, "\(read)")

            let toDevice = try sb.vaultctl(["move", name, "--to", "device"])
            #expect(toDevice.status == 0, "\(toDevice)")
            #expect(sb.secretToolLookup(name).stdout.isEmpty, "the KeePassXC copy went with the move")
            let back = try sb.vaultctl(["move", name, "--to", "sync"])
            #expect(back.status == 0, "\(back)")
            #expect(sb.secretToolLookup(name).stdout == secret)

            let delete = try sb.vaultctl(["delete", name])
            #expect(delete.status == 0, "\(delete)")
            #expect(sb.secretToolLookup(name).stdout.isEmpty)
            #expect(try sb.vaultctl(["status", name]).stdoutText.hasPrefix("none:"))
        }
    }

    /// With "confirm access" on, an item is locked until the person allows vaultctl. Status says where it
    /// is; headless, read refuses before the password prompt; with a display nobody answers here, so read
    /// gives up after the bound and dismisses KeePassXC's dialog.
    @Test func withAccessConfirmationAReadNeedsThePersonsAnswer() throws {
        try keepassxc(.keepassxcConfirm) { _, sb in
            let name = sb.uniqueSlot("kpxc-confirm")
            try sb.store(name, TestData.textSecret(name), mode: "sync")
            let status = try sb.vaultctl(["status", name])
            #expect(status.stdoutText.hasPrefix("in-slot:"), "\(status)")
            #expect(status.stdoutText.contains("asks you to confirm"), "\(status)")

            let headless = try sb.vaultctlCounted(["read", name])
            #expect(headless.status == 69 && headless.stdout.isEmpty, "\(headless)")
            #expect(sb.askpassCalls == 0, "no password was asked for a value that could not be read")
            #expect(headless.elapsed < Self.bound)

            let unanswered = try sb.vaultctl(["read", name], overriding: ["DISPLAY": ":97", "VAULTCTL_PROMPT_SECONDS": "2"])
            #expect(unanswered.status == 69 && unanswered.stdout.isEmpty, "\(unanswered)")
            #expect(unanswered.stderr.contains("nobody answered the provider's prompt"), "\(unanswered.stderr)")
            #expect(unanswered.elapsed < Self.bound)
        }
    }

    /// `lock` locks KeePassXC's database through the Secret Service and says so.
    @Test func lockLocksTheDatabase() throws {
        try keepassxc { provider, sb in
            let lock = try sb.vaultctl(["lock"])
            #expect(lock.status == 0, "\(lock)")
            #expect(lock.stderr.contains("and so is the Secret Service collection 'vaultctl test'"), "\(lock.stderr)")
            let locked = ProcessRunner.run(Paths.tool("gdbus"), [
                "call", "--session", "--dest", "org.freedesktop.secrets",
                "--object-path", "/org/freedesktop/secrets/collection/db",
                "--method", "org.freedesktop.DBus.Properties.Get", "org.freedesktop.Secret.Collection", "Locked",
            ], environment: provider.clientEnvironment, timeout: .seconds(15))
            #expect(locked.stdoutText.contains("true"), "\(locked)")
        }
    }
}
