#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The TPM-sealed device key is unsealed only after PAM, for the read that needs it: every command, run
/// against a real software TPM through a `vaultctl-tpm` that notes each operation, unseals nothing unless
/// it passed a fresh authentication (and nothing at all when the password is wrong).
@Suite("the device key is unsealed only behind PAM", .serialized, .tags(.needsServices))
struct UnsealBehindPAMTests {
    /// The built vaultctl copied into a folder of its own, with a `vaultctl-tpm` beside it that appends its
    /// operation (`seal` or `unseal`) to a log and then runs the real helper.
    struct CountingInstall {
        let vaultctl: String
        let log: String

        init() throws {
            let folder = try Fixtures.makeFolder("counting")
            vaultctl = "\(folder)/vaultctl"
            log = "\(folder)/tpm.log"
            let cp = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, vaultctl], environment: Fixtures.baseEnvironment)
            try #require(cp.status == 0, "\(cp)")
            let real = "\(Paths.folder(of: Paths.vaultctl))/vaultctl-tpm"
            let script = "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(log)'\nexec '\(real)' \"$@\"\n"
            try #require(FileText.write("\(folder)/vaultctl-tpm", script, mode: 0o755) && chmod("\(folder)/vaultctl-tpm", 0o755) == 0)
        }

        /// The operations so far, in order.
        var operations: [String] { (FileText.read(log) ?? "").split(separator: "\n").map(String.init) }
        func reset() { unlink(log) }

        func run(_ sb: Sandbox, _ args: [String], stdin: Stdin = .null, askpass: AskpassMode = .correct,
                 tpm: SoftwareTPM, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
            let env = try sb.environment(askpass: askpass).merging(TPMDeviceKeyTests.using(tpm)) { $1 }
            return Sandbox.repeatingPAMWrapperRaces {
                ProcessRunner.run(vaultctl, args, environment: env, stdin: stdin, sourceLocation: sourceLocation)
                    .droppingPAMWrapperNoise()
            }
        }
    }

    static func gitRequest(_ host: String, password: String?) -> Stdin {
        .text("protocol=https\nhost=\(host)\nusername=alice\n" + (password.map { "password=\($0)\n" } ?? "") + "\n")
    }

    @Test func recoveryStatusUnsealsNothingAndConfirmCopiedOnlyAfterPAM() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let install = try CountingInstall()
        let generate = try install.run(sb, ["recovery", "generate"], tpm: tpm)
        try #require(generate.status == 0, "\(generate)")
        try #require(Paths.exists("\(sb.stateFolder)/device.tpm2"), "the code is sealed under the TPM key")
        install.reset()

        let status = try install.run(sb, ["recovery", "status", "--json"], askpass: .wrong, tpm: tpm)
        #expect(status.status == 0 && status.stdoutText.contains(#""copied":false"#), "\(status)")
        #expect(install.operations.isEmpty, "a status unseals nothing: \(install.operations)")

        for askpass in [AskpassMode.wrong, .unset] {
            let refused = try install.run(sb, ["recovery", "confirm-copied"], askpass: askpass, tpm: tpm)
            #expect(refused.status == 77, "\(askpass): \(refused)")
            #expect(install.operations.isEmpty, "\(askpass): nothing unsealed before PAM: \(install.operations)")
        }
        let still = try install.run(sb, ["recovery", "status", "--json"], tpm: tpm)
        #expect(still.stdoutText.contains(#""copied":false"#), "a refused confirm marks nothing: \(still)")

        let confirm = try install.run(sb, ["recovery", "confirm-copied"], tpm: tpm)
        #expect(confirm.status == 0, "\(confirm)")
        #expect(install.operations == ["unseal"], "one unseal, after PAM: \(install.operations)")
        let audit = sb.auditFileLines.filter { $0.contains("\"recovery confirm-copied\"") }
        #expect(audit.count == 3 && audit.last?.contains("\"recovery-code\"") == true && audit.last?.contains("\"ok\"") == true,
                "gated and audited like a read: \(audit)")

        install.reset()
        let marked = try install.run(sb, ["recovery", "status", "--json"], askpass: .wrong, tpm: tpm)
        #expect(marked.status == 0 && marked.stdoutText.contains(#""copied":true"#), "\(marked)")
        #expect(install.operations.isEmpty, "\(install.operations)")

        // A new code (over a marked one: --replace, after PAM) clears the mark, still without unsealing.
        let again = try install.run(sb, ["recovery", "generate", "--replace"], tpm: tpm)
        try #require(again.status == 0, "\(again)")
        let cleared = try install.run(sb, ["recovery", "status", "--json"], askpass: .wrong, tpm: tpm)
        #expect(cleared.stdoutText.contains(#""copied":false"#), "\(cleared)")
        #expect(install.operations.isEmpty, "\(install.operations)")
    }

    @Test func credentialEraseComparesOnlyAfterPAM() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let install = try CountingInstall()
        let host = "\(sb.uniqueSlot("host")).example"
        let slot = "git_https_alice@\(host)"
        let stored = try install.run(sb, ["credential", "store"], stdin: Self.gitRequest(host, password: "tok-right"), tpm: tpm)
        try #require(stored.status == 0, "\(stored)")
        install.reset()

        // The password git rejected is compared with the stored one: that reads it, so PAM comes first.
        let refused = try install.run(sb, ["credential", "erase"], stdin: Self.gitRequest(host, password: "tok-right"),
                                      askpass: .wrong, tpm: tpm)
        #expect(refused.status == 77, "\(refused)")
        #expect(install.operations.isEmpty, "nothing unsealed before PAM: \(install.operations)")
        #expect(try sb.listed()[slot] == ["device"], "nothing erased")

        let other = try install.run(sb, ["credential", "erase"], stdin: Self.gitRequest(host, password: "tok-older"), tpm: tpm)
        #expect(other.status == 0, "\(other)")
        #expect(install.operations == ["unseal"], "\(install.operations)")
        #expect(try sb.listed()[slot] == ["device"], "a newer credential stays")

        let erased = try install.run(sb, ["credential", "erase"], stdin: Self.gitRequest(host, password: "tok-right"), tpm: tpm)
        #expect(erased.status == 0, "\(erased)")
        #expect(try sb.listed()[slot] == nil)
        #expect(sb.auditFileLines.filter { $0.contains("\"credential erase\"") }.count == 3, "\(sb.auditFileLines)")

        // Nothing stored for the host: nothing to compare, so no prompt at all.
        install.reset()
        let none = try install.run(sb, ["credential", "erase"], stdin: Self.gitRequest(host, password: "tok-right"),
                                   askpass: .wrong, tpm: tpm)
        #expect(none.status == 0 && install.operations.isEmpty, "\(none) \(install.operations)")
    }

    /// Every command that needs no PAM, and every gated one refused by PAM, leaves the TPM alone.
    @Test func noCommandUnsealsWithoutAFreshAuthentication() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let install = try CountingInstall()
        let name = sb.uniqueSlot("held")
        let secret = TestData.textSecret(name)
        let s = try install.run(sb, ["store", name, "--mode", "device"], stdin: .bytes(secret), tpm: tpm)
        try #require(s.status == 0, "\(s)")
        #expect(install.operations == ["seal", "unseal"], "a new key is sealed, then unsealed once to check it: \(install.operations)")
        try #require(try install.run(sb, ["recovery", "generate"], tpm: tpm).status == 0)
        // Six refused passwords follow; the rate limit is not what this test is about.
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":100}}"#)
        install.reset()

        let commands: [[String]] = [
            ["status", name], ["status", name, "--json"], ["list"], ["device-key", "status"], ["device-key", "status", "--json"],
            ["recovery", "status"], ["recovery", "status", "--json"], ["log"],
            ["store", sb.uniqueSlot("more"), "--mode", "device"],
            ["read", name], ["recovery", "show"], ["recovery", "confirm-copied"], ["move", name, "--to", "sync"],
            ["supply", name, "--", "cat"], ["device-key", "seal"],
        ]
        for args in commands {
            install.reset()
            let r = try install.run(sb, args, stdin: .bytes(secret), askpass: .wrong, tpm: tpm)
            #expect(!r.stdout.contains(bytes: secret), "\(args): \(r)")
            #expect(install.operations.isEmpty, "\(args) (exit \(r.status)) asked the TPM: \(install.operations)")
        }
        install.reset()
        let read = try install.run(sb, ["read", name], tpm: tpm)
        #expect(read.status == 0 && read.stdout == secret, "\(read)")
        #expect(install.operations == ["unseal"], "the one unseal of a gated read: \(install.operations)")
    }
}
