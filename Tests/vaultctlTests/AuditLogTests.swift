import Foundation
import Testing
import TestSupport

/// The audit log: one JSON line per gated command, refusal and supply in the state folder; `vaultctl log`
/// shows it. Never the secret, never its length.
@Suite("audit log", .tags(.needsServices))
struct AuditLogTests {
    static let fields: Set<String> = ["time", "command", "slot", "origin", "result", "reason"]

    /// A distinctive 37-byte secret: its own length is a number worth looking for.
    static func secret37(_ name: String) -> [UInt8] {
        let seed = "Zq#37-audit-" + String(name.reversed())
        let bytes = Array(seed.utf8.prefix(37))
        return bytes + Array(repeating: UInt8(ascii: "~"), count: 37 - bytes.count)
    }

    /// One line per command; a supply that handed the secret over has two: "handed-over", written before
    /// COMMAND got it, and how it ended.
    @Test func gatedCommandsRefusalsAndSuppliesEachAppendOneLine() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit")
        let secret = Self.secret37(name)
        try #require(secret.count == 37)
        try sb.storeSuppliable(name, secret)
        // A store is a change: its own line, then the runs below.
        let stored = sb.auditFileLines
        #expect(stored.count == 1 && stored.first?.contains(#""command":"store""#) == true, "\(stored)")

        let runs: [(args: [String], password: CountedPassword, origin: [String: String], status: Int32)] = [
            (["read", name], .correct, [:], 0),
            (["supply", name, "--", "/bin/true"], .correct, [:], 0),
            (["askpass", name], .correct, SessionOrigin.tailscale, 77),
            (["read", name], .wrong, [:], 77),
            (["supply", name, "--", "/bin/false"], .correct, [:], 1),
        ]
        for run in runs {
            let r = try sb.vaultctlCounted(run.args, password: run.password, overriding: run.origin)
            #expect(r.status == run.status, "\(run.args): \(r)")
        }

        // A run repeated after a pam_wrapper race (see `isPAMWrapperRace`) left an "error" line of its own.
        let lines = sb.auditFileLines.dropFirst(stored.count).filter { !$0.contains("PAM could not start") }
        let lineCount = runs.count + 2  // the two supplies that handed the secret over
        #expect(lines.count == lineCount, "\(lines)")
        let fileEntries = try JSONLines.parse(lines.joined(separator: "\n"))
        for entry in fileEntries {
            #expect(Set(entry.keys).isSubset(of: Self.fields), "only the documented fields: \(entry.keys.sorted())")
        }

        let log = try sb.vaultctlCounted(["log", "--json"])
        #expect(log.status == 0, "\(log)")
        let entries = try JSONLines.parse(log.stdoutText).dropFirst(stored.count).filter { !(($0["reason"] as? String)?.contains("PAM could not start") ?? false) }
        try #require(entries.count == lineCount, "\(log.stdoutText)")
        for entry in entries {
            // `log --json` adds where each line came from: here (no gate) the state folder's log.
            #expect(Set(entry.keys) == Self.fields.union(["source"]), "\(entry.keys.sorted())")
            #expect(entry["source"] as? String == "user")
            #expect(entry["slot"] as? String == name)
            let time = entry["time"] as? String ?? ""
            #expect(time.count == 20 && time.hasSuffix("Z"), "\(time)")
        }
        #expect(entries.map { $0["command"] as? String } == ["read", "supply", "supply", "askpass", "read", "supply", "supply"])
        #expect(entries.map { $0["result"] as? String } == ["ok", "handed-over", "ok", "refused", "failed", "handed-over", "failed"])
        #expect(entries.map { $0["reason"] is NSNull } == [true, true, true, false, false, true, false], "a reason for each failure")
        #expect((entries[3]["origin"] as? String)?.contains("100.64.7.9") == true, "\(entries[3])")
        #expect((entries[0]["origin"] as? String) == "local session", "\(entries[0])")

        let plain = try sb.vaultctlCounted(["log"])
        #expect(plain.status == 0)
        #expect(plain.stdoutText.split(separator: "\n").filter { !$0.contains("PAM could not start") }.count == lineCount + stored.count,
                "\(plain.stdoutText)")

        // Never the secret, never its length.
        let file = try #require(FileBytes.read(sb.auditLogPath))
        for (what, bytes) in [("the audit file", file), ("log --json", log.stdout), ("log", plain.stdout)] {
            #expect(!bytes.contains(bytes: secret), "\(what) holds the secret")
            #expect(!bytes.contains(bytes: Array(secret.prefix(12))), "\(what) holds part of the secret")
        }
        for entry in entries + fileEntries {
            for key in entry.keys {
                for word in ["length", "bytes", "size", "count"] {
                    #expect(!key.lowercased().contains(word), "a field named \(key)")
                }
            }
            let reason = (entry["reason"] as? String ?? "").lowercased()
            #expect(reason.range(of: #"\b37\b"#, options: .regularExpression) == nil, "a reason with the length: \(reason)")
            #expect(!reason.contains("byte"), "a reason about bytes: \(reason)")
        }
        #expect(sb.askpassCalls == 4, "the refusal asked nothing")
    }

    @Test func theLogIsAPrivateFileInTheStateFolder() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-file")
        try sb.store(name, TestData.textSecret(name))
        _ = try sb.readRepeatingRaces(name)
        var st = stat()
        try #require(lstat(sb.auditLogPath, &st) == 0, "\(sb.auditLogPath) exists")
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(st.st_mode & S_IFMT == S_IFREG)
    }

    @Test func logLimitShowsTheNewestEntries() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-limit")
        try sb.store(name, TestData.textSecret(name))
        _ = try sb.readRepeatingRaces(name)
        _ = try sb.readRepeatingRaces(name, askpass: .wrong)
        _ = try sb.vaultctl(["askpass", name])  // refused: not allowed

        let json = try sb.vaultctl(["log", "--json", "--limit", "2"])
        #expect(json.status == 0, "\(json)")
        let entries = try JSONLines.parse(json.stdoutText)
        #expect(entries.count == 2)
        #expect(entries.map { $0["result"] as? String } == ["failed", "refused"], "the newest two, oldest first")

        let plain = try sb.vaultctl(["log", "--limit=2"])
        #expect(plain.stdoutText.split(separator: "\n").count == 2, "\(plain.stdoutText)")
    }

    @Test func anEmptyLogPrintsNothing() throws {
        let sb = try Sandbox()
        let r = sb.vaultctlWithoutPAM(["log", "--json"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty)
    }

    /// Changes that name no slot on the command line are audited too: `credential store` (git's password,
    /// written without PAM) with the slot it wrote, `target add` and `target remove` (what `receive` runs
    /// with a secret on its standard input) with the target in the reason; `target list` changes nothing.
    @Test func credentialStoreAndTargetChangesLeaveALine() throws {
        let sb = try Sandbox()
        let password = "Zq-git-token-\(UInt32.random(in: 0...UInt32.max))"
        let host = "audit-\(UInt32.random(in: 0...UInt32.max)).example.org"
        let stored = ProcessRunner.run(Paths.vaultctl, ["credential", "store"], environment: sb.environmentWithoutPAM(),
                                       stdin: .text("protocol=https\nhost=\(host)\nusername=alice\npassword=\(password)\n\n"))
        #expect(stored.status == 0, "\(stored)")
        let target = "audit-target"
        for args in [["target", "add", target, "--", "/bin/true"], ["target", "list"], ["target", "remove", target],
                     ["target", "remove", target]] {
            _ = sb.vaultctlWithoutPAM(args)
        }
        let lines = sb.auditFileLines
        #expect(!lines.joined().contains(password), "the password is in the audit log")
        let entries = try JSONLines.parse(lines.joined(separator: "\n"))
        let summary = entries.map { [$0["command"] as? String ?? "?", $0["result"] as? String ?? "?"].joined(separator: " ") }
        #expect(summary == ["credential store ok", "target add ok", "target remove ok", "target remove error"], "\(lines)")
        guard entries.count == 4 else { return }
        let slot = try #require(entries[0]["slot"] as? String, "no slot on the credential store line: \(lines[0])")
        #expect(slot.contains(host), "\(slot)")
        #expect(try sb.listed()[slot] != nil, "the line names the slot that was written: \(slot)")
        for entry in entries.dropFirst() {
            #expect(entry["slot"] == nil, "a target is not a slot: \(entry)")
            #expect((entry["reason"] as? String)?.contains("target '\(target)'") == true, "\(entry)")
        }
    }

    @Test func usageErrorsWriteNothing() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-usage")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let stored = sb.auditFileLines
        let usage: [[String]] = [
            ["supply", name],
            ["supply", name, "/bin/true"],
            ["supply", "../escape", "--", "/bin/true"],
            ["supply", name, "--bogus", "--", "/bin/true"],
            ["askpass"],
            ["askpass", "no/such"],
            ["allow-supply", name, "maybe"],
            ["read", name, "extra"],
            ["unlock", "now"],
            ["lock", "now"],
            ["log", "--limit", "0"],
            ["log", "--limit", "many"],
        ]
        for args in usage {
            let r = try sb.vaultctlCounted(args)
            #expect(r.status == 64, "\(args): \(r)")
        }
        #expect(sb.auditFileLines == stored, "only the store's line: \(sb.auditFileLines)")
        #expect(sb.askpassCalls == 0)
    }

    @Test func aLockFromAfarIsRecordedWithItsOrigin() throws {
        let sb = try Sandbox(busAddress: VaultLockTests.noBus)
        let lock = sb.vaultctlWithoutPAM(["lock"], overriding: SessionOrigin.tailscale)
        #expect(lock.status == 0, "\(lock)")
        let entries = try JSONLines.parse(sb.vaultctlWithoutPAM(["log", "--json"]).stdoutText)
        try #require(entries.count == 1, "\(entries)")
        #expect(entries[0]["command"] as? String == "lock")
        #expect(entries[0]["result"] as? String == "ok")
        #expect((entries[0]["origin"] as? String)?.contains("100.64.7.9") == true, "\(entries[0])")
    }
}
