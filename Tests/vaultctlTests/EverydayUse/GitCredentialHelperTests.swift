#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `credential.helper vaultctl` with real git: `git credential approve|fill|reject` and a `git ls-remote`
/// against a local server that demands Basic authentication; and askpass refusing git's username prompt.
@Suite("git credential helper", .tags(.needsServices))
struct GitCredentialHelperTests {
    static func fields(_ host: String, user: String? = "alice", password: String? = nil) -> [(String, String)] {
        var f = [("protocol", "https"), ("host", host)]
        if let user { f.append(("username", user)) }
        if let password { f.append(("password", password)) }
        return f
    }

    @Test func approveFillRejectWithRealGit() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb)
        let host = "\(sb.uniqueSlot("host")).example"
        let token = "ghp_\(sb.uniqueSlot("token"))"
        let slot = "git_https_alice@\(host)"

        let approve = try git.credential("approve", Self.fields(host, password: token))
        try #require(approve.status == 0, "\(approve)")
        #expect(try sb.listed()[slot] == ["device"], "stored in the device slot by default")
        #expect(sb.askpassCalls == 0, "store asks no password")

        // git names no user: the one stored for that host answers, after one PAM prompt.
        let fill = try git.credential("fill", Self.fields(host, user: nil))
        #expect(fill.status == 0, "\(fill)")
        #expect(fill.stdoutText == "protocol=https\nhost=\(host)\nusername=alice\npassword=\(token)\n", "\(fill.stdoutText)")
        #expect(sb.askpassCalls == 1, "a fresh PAM authentication for the read")
        let audit = sb.auditFileLines.filter { $0.contains("\"credential get\"") }
        #expect(audit.count == 1 && audit[0].contains("\"\(slot)\"") && audit[0].contains("\"ok\""), "\(audit)")
        #expect(!sb.auditFileLines.joined().contains(token))

        // A rejected password that is not the stored one erases nothing; the stored one is erased.
        let stale = try git.credential("reject", Self.fields(host, password: "ghp_an-older-token"))
        #expect(stale.status == 0, "\(stale)")
        #expect(try sb.listed()[slot] == ["device"], "a newer credential stays")
        let reject = try git.credential("reject", Self.fields(host, password: token))
        #expect(reject.status == 0, "\(reject)")
        #expect(try sb.listed()[slot] == nil)
        #expect(sb.askpassCalls == 3, "each erase compares after one PAM prompt (git ignores a helper's failure: stale \(stale), reject \(reject))")
    }

    @Test func aFailedAuthenticationGivesGitNothing() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb)
        let host = "\(sb.uniqueSlot("host")).example"
        let token = "tok-\(sb.uniqueSlot("token"))"
        try #require(try git.credential("approve", Self.fields(host, password: token)).status == 0)
        let fill = try git.credential("fill", Self.fields(host), password: .wrong)
        #expect(fill.status != 0, "git found no password and may not prompt: \(fill)")
        #expect(!fill.stdout.contains(bytes: Array(token.utf8)))
        #expect(!fill.stderr.contains(token))
        #expect(fill.stderr.contains("Authentication failed"), "\(fill.stderr)")
        #expect(sb.auditFileLines.last?.contains("\"failed\"") == true, "\(sb.auditFileLines)")
    }

    /// Nothing stored: an empty answer without a prompt, so git asks its next helper.
    @Test func anEmptyAnswerLetsGitAskTheNextHelper() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb, helpers: ["vaultctl", "!f() { echo username=next; echo password=from-the-next-helper; }; f"])
        let fill = try git.credential("fill", Self.fields("\(sb.uniqueSlot("nothing")).example", user: nil))
        #expect(fill.status == 0, "\(fill)")
        #expect(fill.stdoutText.hasSuffix("username=next\npassword=from-the-next-helper\n"), "\(fill.stdoutText)")
        #expect(sb.askpassCalls == 0, "nothing stored, nothing asked")
    }

    /// `credential.helper "vaultctl --mode sync"`: git passes the helper's arguments before the action.
    @Test func modeSyncThroughTheHelperArguments() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb, helpers: ["vaultctl --mode sync"])
        let host = "\(sb.uniqueSlot("host")).example"
        let token = "tok-\(sb.uniqueSlot("sync"))"
        let slot = "git_https_alice@\(host)"
        try #require(try git.credential("approve", Self.fields(host, password: token)).status == 0)
        #expect(try sb.listed()[slot] == ["sync"])
        #expect(sb.secretToolLookup(slot).stdoutText == token)
        let fill = try git.credential("fill", Self.fields(host))
        #expect(fill.stdoutText.hasSuffix("password=\(token)\n"), "\(fill)")
        try #require(try git.credential("reject", Self.fields(host, password: token)).status == 0)
        #expect(sb.secretToolLookup(slot).stdout.isEmpty)
    }

    /// The entry point itself: unknown keys are ignored, unknown actions exit 0 silently, a terminal on
    /// standard input is a usage error.
    @Test func theHelperIgnoresWhatItDoesNotKnow() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb)
        let helper = "\(git.bin)/git-credential-vaultctl"
        let env = try git.environment()
        let host = "\(sb.uniqueSlot("host")).example"
        let store = ProcessRunner.run(helper, ["store"], environment: env, stdin: .text(
            "capability[]=authtype\nprotocol=https\nhost=\(host)\nwwwauth[]=Basic realm=\"x\"\nusername=bob\npassword=pw-\(host)\npassword_expiry_utc=99\nfuture_key=1\n\n"))
        #expect(store.status == 0 && store.stdout.isEmpty && store.stderrBesidesNewVaultNotice.isEmpty, "\(store)")
        #expect(try sb.listed()["git_https_bob@\(host)"] == ["device"])
        let unknown = ProcessRunner.run(helper, ["--mode", "sync", "capability"], environment: env, stdin: .text("protocol=https\n\n"))
        #expect(unknown.status == 0 && unknown.stdout.isEmpty && unknown.stderr.isEmpty, "\(unknown)")
        let terminal = try sb.vaultctl(["credential", "get"], stdin: .terminal)
        #expect(terminal.status == 64, "\(terminal)")
        let noPasswordStdin = try sb.vaultctl(["credential", "get", "--password-stdin"], stdin: .text("protocol=https\n"))
        #expect(noPasswordStdin.status == 64, "standard input is git's, so --password-stdin is not offered: \(noPasswordStdin)")
    }

    /// A real clone-style request: git ls-remote over HTTP, the server demanding Basic authentication. A
    /// wrong stored token is rejected by the server and erased by git through the helper; the right one works.
    @Test func lsRemoteAgainstAServerDemandingBasicAuthentication() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb)
        let token = "tok-\(sb.uniqueSlot("http"))"
        let server = try GitHTTPServer(in: try Fixtures.makeFolder("http"), user: "alice", password: token)
        let host = String(server.url.dropFirst("http://".count).prefix { $0 != "/" })
        let slot = "git_http_alice@\(host.replacingOccurrences(of: ":", with: "+3A"))"

        let wrong = [("protocol", "http"), ("host", host), ("username", "alice"), ("password", "not-\(token)")]
        try #require(try git.credential("approve", wrong).status == 0)
        let refused = try git.git(["ls-remote", server.url])
        #expect(refused.status != 0, "\(refused)")
        #expect(try sb.listed()[slot] == nil, "git rejected the wrong token and the helper erased it")

        let right = [("protocol", "http"), ("host", host), ("username", "alice"), ("password", token)]
        try #require(try git.credential("approve", right).status == 0)
        sb.resetAskpassLog()
        let ls = try git.git(["ls-remote", server.url])
        #expect(ls.status == 0, "\(ls)")
        #expect(ls.stdoutText.contains("\(server.commit)\trefs/heads/main"), "\(ls.stdoutText)")
        #expect(sb.askpassCalls == 1, "one PAM prompt for the one read")
        #expect(!ls.stderr.contains(token))
        #expect(try sb.listed()[slot] == ["device"], "git approved it again; still one slot")
    }

    /// The old GIT_ASKPASS route: git asks "Username for …" first; askpass refuses, before any PAM prompt,
    /// so the token is never git's username and never lands in the next prompt's argv.
    @Test func askpassRefusesGitsUsernamePrompt() throws {
        let sb = try Sandbox()
        let git = try GitWorld(sb, helpers: [])
        let token = "tok-\(sb.uniqueSlot("askpass"))"
        let name = sb.uniqueSlot("gittoken")
        try sb.storeSuppliable(name, Array(token.utf8))
        let wrapper = "\(sb.root)/git-askpass"
        try #require(FileText.write(wrapper, "#!/bin/sh\nexec vaultctl askpass \(name) -- \"$@\"\n", mode: 0o700))
        let server = try GitHTTPServer(in: try Fixtures.makeFolder("http"), user: "alice", password: token)
        sb.resetAskpassLog()
        let ls = try git.git(["ls-remote", server.url], extra: ["GIT_ASKPASS": wrapper])
        #expect(ls.status != 0, "\(ls)")
        #expect(ls.stderr.contains("credential.helper vaultctl"), "\(ls.stderr)")
        #expect(!ls.stderr.contains(token) && !ls.stdout.contains(bytes: Array(token.utf8)))
        #expect(sb.askpassCalls == 0, "refused before any PAM prompt")

        let direct = try sb.vaultctlCounted(["askpass", name, "--", "Username for 'https://github.com': "])
        #expect(direct.status == 64 && direct.stdout.isEmpty, "\(direct)")
    }

    /// A prompt that carries the slot's secret (what git asks after a token was given as the username):
    /// the URL's user part is not shown or passed to VAULT_ASKPASS, and the secret is not printed.
    @Test func aPromptCarryingTheSecretIsNeitherEchoedNorAnswered() throws {
        let sb = try Sandbox()
        let token = "ghp_\(sb.uniqueSlot("leak"))"
        let name = sb.uniqueSlot("leaked")
        try sb.storeSuppliable(name, Array(token.utf8))
        let seen = "\(sb.root)/askpass-arguments"
        let recorder = "\(sb.root)/recording-askpass"
        try #require(FileText.write(recorder, "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(seen)'\nprintf '%s\\n' '\(Fixtures.pamPassword)'\n", mode: 0o700))
        let prompt = "Password for 'https://\(token)@github.com': "
        let r = try Sandbox.repeatingPAMWrapperRaces {
            try sb.vaultctl(["askpass", name, "--", prompt], overriding: ["VAULT_ASKPASS": recorder])
        }
        #expect(r.status != 0, "\(r)")
        #expect(r.stdout.isEmpty, "the secret was not printed")
        #expect(!r.stderr.contains(token), "\(r.stderr)")
        let arguments = FileText.read(seen) ?? ""
        #expect(arguments.contains("https://…@github.com"), "the prompt is shown without its user part: \(arguments)")
        #expect(!arguments.contains(token), "the secret never reached VAULT_ASKPASS's argv")
        #expect(!sb.auditFileLines.joined().contains(token))
    }
}
