import Testing
import TestSupport

/// Messages worded from what happened (issue 25, point 17): no invitation to store after a delete of
/// nothing, an errno in words, the missing variable named, every policy setting that was checked shown.
@Suite("message wording", .tags(.needsServices))
struct MessageWordingTests {
    @Test func aDeleteOfAnEmptySlotSaysNothingWasDeleted() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["delete", sb.uniqueSlot("never")])
        #expect(r.status == 66, "\(r)")
        #expect(r.stderr.contains("holds no value; nothing was deleted") && !r.stderr.contains("vaultctl store"), "\(r.stderr)")
    }

    @Test func aMissingAskpassProgramIsSaidInWords() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("ask-missing")
        try sb.store(name, Array("v".utf8))
        let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": "\(sb.root)/no-such-askpass"])
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("No such file or directory") && !r.stderr.contains("error 2"), "\(r.stderr)")
    }

    /// After `su -` neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set: the message says so, and
    /// how to get a bus, instead of naming "$XDG_RUNTIME_DIR/bus".
    @Test func noSessionBusNamesWhatIsMissing() throws {
        let sb = try Sandbox()
        var env = sb.environmentWithoutPAM()
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["XDG_RUNTIME_DIR"] = nil
        let r = ProcessRunner.run(Paths.vaultctl, ["status", sb.uniqueSlot("nobus")], environment: env)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText.contains("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("dbus-run-session") && !r.stdoutText.contains("$XDG_RUNTIME_DIR"), "\(r.stdoutText)")
    }

    /// `credential get` for a host with nothing stored answers nothing, and its audit line says so instead
    /// of "ok" (issue 25, point 12).
    @Test func aCredentialGetWithNothingStoredIsAuditedAsSuch() throws {
        let sb = try Sandbox()
        let host = "\(sb.uniqueSlot("nohost")).example"
        let r = ProcessRunner.run(Paths.vaultctl, ["credential", "get"], environment: try sb.environment(askpass: .declining),
                                  stdin: .text("protocol=https\nhost=\(host)\n\n"))
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r)")
        let line = sb.auditFileLines.last ?? ""
        #expect(line.contains(#""command":"credential get""#) && line.contains(#""result":"nothing-stored""#), "\(line)")
        #expect(line.contains(host), "\(line)")
    }

    @Test func policyCheckShowsThePromptAndGateSettings() throws {
        let sb = try Sandbox()
        try sb.writePolicy(#"{"version": 1, "prompt": {"askpassSeconds": 30}, "gate": {"storeOver": false, "delete": true}}"#)
        let r = sb.vaultctlWithoutPAM(["policy", "check"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText.contains("askpass answer within: 30 s"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("password before a store over a value: no; before a delete: yes"), "\(r.stdoutText)")
    }
}
