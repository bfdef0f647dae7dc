import Testing
import TestSupport

/// Usage errors exit 64 before anything is touched; help and version exit 0.
@Suite("Usage errors and help", .tags(.needsServices))
struct UsageTests {
    static let badNames = ["../x", "a/b", "", String(repeating: "a", count: 129)]

    @Test func unknownCommandIs64() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["frobnicate"], stdin: .text("secret-for-unknown-command"))
        r.expectFailure(64, saying: "Unknown command 'frobnicate'")
        #expect(sb.wroteNothing)
    }

    /// While the rate limit blocks gated commands, or the vault is locked, a usage error is still a usage
    /// error: 64 with its own words, before any gate, and no audit line (issue 25, point 10).
    @Test func usageErrorsComeBeforeTheGates() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("blocked")
        try sb.store(name, Array("v".utf8))
        for _ in 0..<3 { _ = try sb.read(name, askpass: .wrong) }
        let blocked = try sb.read(name)
        try #require(blocked.status == 75, "the rate limit blocks: \(blocked)")
        let before = sb.auditFileLines.count
        for args in [["read", "bad name"], ["delete", "a/b"], ["allow-supply", name, "maybe"], ["read", name, "--bogus"]] {
            let r = try sb.vaultctl(args)
            #expect(r.status == 64 && !r.stderr.contains("Too many failed attempts"), "\(args): \(r)")
        }
        #expect(sb.auditFileLines.count == before, "usage errors leave no audit line")
        // `lock` also locks the Secret Service's collection: never the shared keyring's.
        #expect(sb.vaultctlWithoutPAM(["lock"], overriding: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]).status == 0)
        let locked = try sb.vaultctl(["read", "bad name"])
        #expect(locked.status == 64 && !locked.stderr.contains("locked"), "\(locked)")
    }

    @Test func noCommandIs64() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl([])
        r.expectFailure(64)
        #expect(sb.wroteNothing)
    }

    @Test(arguments: [["store", "NAME", "--bogus"], ["list", "--bogus"], ["read", "NAME", "--mode", "sync"],
                      ["store", "NAME", "-x"]])
    func unknownOptionIs64(args: [String]) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("opt")
        let argv = args.map { $0 == "NAME" ? name : $0 }
        let r = try sb.vaultctl(argv, stdin: .text("secret-for-unknown-option"))
        r.expectFailure(64, saying: "Unknown option")
        #expect(sb.wroteNothing)
        #expect(sb.secretToolLookup(name).stdout.isEmpty)
    }

    @Test(arguments: ["store", "read", "delete"], UsageTests.badNames)
    func badSlotNameIs64(command: String, name: String) throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl([command, name], stdin: .text("secret-for-bad-name"))
        r.expectFailure(64, saying: "not a valid slot name")
        #expect(sb.wroteNothing)
        #expect(!Paths.exists("\(sb.root)/x"), "no file escaped the state folder")
    }

    @Test func longestSlotNameIsAccepted() throws {
        let sb = try Sandbox()
        let unique = sb.uniqueSlot("long")
        let name = unique + String(repeating: "x", count: 128 - unique.utf8.count)
        try #require(name.utf8.count == 128)
        try sb.store(name, TestData.textSecret("long"))
        #expect(try sb.read(name).stdout == TestData.textSecret("long"))
    }

    /// A secret given as an argument is refused (it would show in `ps` and shell history) and not echoed.
    @Test func secretAsArgumentIs64() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("argsecret")
        let argumentSecret = "hunter2-\(name)"
        let r = try sb.vaultctl(["store", name, argumentSecret], stdin: .text("from-stdin-\(name)"))
        r.expectFailure(64, saying: "never taken from arguments")
        #expect(!r.stderr.contains(argumentSecret), "the refused argument is not echoed")
        #expect(sb.wroteNothing)
        #expect(try sb.listed()[name] == nil)
    }

    @Test func bogusModeIs64() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("bogus-mode")
        let r = try sb.vaultctl(["store", name, "--mode", "bogus"], stdin: .text("secret-\(name)"))
        r.expectFailure(64, saying: "'bogus'")
        #expect(sb.wroteNothing)
        #expect(sb.secretToolLookup(name).stdout.isEmpty)
    }

    @Test func overviewHelpExits0() throws {
        let sb = try Sandbox()
        for args in [["--help"], ["help"], ["-h"]] {
            let r = try sb.vaultctl(args)
            #expect(r.status == 0, "\(args): \(r)")
            #expect(r.stderr.isEmpty, "\(args)")
            for word in ["Usage: vaultctl COMMAND", "store", "read", "delete", "list", "VAULT_ASKPASS", "77"] {
                #expect(r.stdoutText.contains(word), "\(args) help mentions \(word)")
            }
        }
        #expect(sb.wroteNothing)
    }

    @Test(arguments: [["help", "store"], ["store", "--help"], ["store", "-h"], ["store", "NAME", "--help"]])
    func storeHelpExits0(args: [String]) throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(args, stdin: .text("not-a-secret"))
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty)
        #expect(r.stdoutText.hasPrefix("Usage: vaultctl store SLOT"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("--mode"))
        #expect(sb.wroteNothing)
    }

    /// The whole screen, so a change to what `read` says about where the password comes from is deliberate.
    @Test func readHelpScreenIsPinned() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["read", "--help"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText == """
            Usage: vaultctl read SLOT [--clip [--clip-seconds N]] [--password-stdin]

            Print a secret after a fresh PAM authentication.

            Every read authenticates you again through PAM (service 'vaultctl'). The password comes from the \
            program in VAULT_ASKPASS, or from the terminal; with --password-stdin, from standard input, one line \
            per PAM question (usually just the password). The exact bytes are written to standard output, with a \
            newline added only when it is a terminal. With --clip, it goes to the clipboard instead (wl-copy on \
            Wayland, xclip or xsel on X11) and is cleared after 45 s (--clip-seconds, VAULTCTL_CLIP_SECONDS) if \
            the clipboard still holds it.

            Options:
              --clip            put the secret on the clipboard instead of standard output
              --clip-seconds N  clear the clipboard after N seconds if it still holds the secret (default 45, or VAULTCTL_CLIP_SECONDS)
              --password-stdin  answer PAM from standard input, one line per question (usually just the password), instead of VAULT_ASKPASS or the terminal

            """, "\(r.stdoutText)")
        #expect(sb.wroteNothing)
    }

    @Test func helpForUnknownCommandIs64() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["help", "frobnicate"])
        #expect(r.status == 64, "\(r)")
    }

    @Test func versionExits0() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["--version"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText.hasPrefix("vaultctl "), "\(r.stdoutText)")
        #expect(r.stdoutText.hasSuffix("\n"))
        #expect(r.stderr.isEmpty)
        #expect(sb.wroteNothing)
    }
}
