#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import GateProtocol
import Vault
@testable import VaultRules

/// `vaultctl log` of a protected vault: the gate's log and the state folder's in one, in time order, each line
/// marked; every line asked for, not only what one answer of the gate holds; and failures that outlive any
/// number of lines that need no password (issue 36, points 4 and 14). On a machine with the gate installed.
@Suite(.serialized, .enabled(if: GateMachine.canRun, "needs root: a mount namespace, users and a set-group-ID file"), .tags(.needsRoot))
final class GateLogTests {
    static let shared = Result { try GateMachine.start() }
    let m: GateMachine

    init() throws {
        m = try Self.shared.get()
        m.reset()
    }

    var folder: String { "/var/lib/vaultctl/\(m.uid("alice"))" }

    /// Lines of the gate's log as the gate writes them, `count` of them from minute `minute` on.
    func lines(_ count: Int, minute: Int, result: String = "ok") -> String {
        (0..<count).map { i in
            "{\"command\":\"store\",\"origin\":\"local session\",\"reason\":null,\"result\":\"\(result)\",\"slot\":\"s\(minute)-\(i)\",\"time\":\"2026-12-07T0\(minute):\(String(format: "%02d:%02d", (i / 60) % 60, i % 60))Z\"}\n"
        }.joined()
    }

    /// Writes `text` as the gate's file `name` in alice's folder, as the gate would have (hers, 0600).
    func writeGateFile(_ name: String, _ text: String) throws {
        let staging = "\(m.folder)/staging"
        try text.write(toFile: staging, atomically: true, encoding: .utf8)
        #expect(m.asRoot("cp \(staging) \(folder)/\(name) && chown alice \(folder)/\(name) && chmod 600 \(folder)/\(name)").status == 0)
    }

    @Test func theLogShowsBothLogsInTimeOrderEachLineMarked() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        #expect(m.run("alice", ["read", "mail", "--password-stdin"], stdin: .text("wrong\n")).status == 77)
        // A command that never reaches the gate: the sync slot (no bus here), in the state folder's log only.
        #expect(m.run("alice", ["store", "other", "--mode", "sync"], stdin: .text("x")).status == 69)
        let json = m.run("alice", ["log", "--json"])
        #expect(json.status == 0, "\(json)")
        let rows = json.stdoutText.split(separator: "\n")
        let gate = rows.filter { $0.contains("\"source\":\"gate\"") }, user = rows.filter { $0.contains("\"source\":\"user\"") }
        #expect(gate.contains { $0.contains("\"command\":\"store\"") && $0.contains("\"slot\":\"mail\"") }, "\(json.stdoutText)")
        #expect(gate.contains { $0.contains("\"result\":\"failed\"") }, "\(json.stdoutText)")
        #expect(user.contains { $0.contains("\"slot\":\"other\"") } && !gate.contains { $0.contains("\"slot\":\"other\"") }, "\(json.stdoutText)")
        #expect(gate.count + user.count == rows.count)
        let text = m.run("alice", ["log"]).stdoutText
        #expect(text.contains("  gate  failed   read mail") && text.contains("  user  error    store other"), "\(text)")
        // In time order: read the times back from the JSON.
        let stamps = rows.map { row -> String in
            let r = row.range(of: "\"time\":\"")!
            return String(row[r.upperBound...].prefix(20))
        }
        #expect(stamps == stamps.sorted(), "\(stamps)")
    }

    /// The state folder's log is any program's of yours to write: lines by the hundred, stamped now or in the
    /// future, or a log made unreadable, never hide the gate's newest lines.
    @Test func linesWrittenToYourOwnLogNeverHideTheGates() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        #expect(m.run("alice", ["read", "mail", "--password-stdin"], stdin: .text("wrong\n")).status == 77)
        let own = "\(m.home("alice"))/.local/state/vaultctl/audit.log"
        let flood = (0..<200).map { i in
            "{\"command\":\"read\",\"origin\":\"local session\",\"reason\":null,\"result\":\"ok\",\"slot\":\"x\(i)\",\"time\":\"\(i >= 100 ? "2099-01-01T00:00:00Z" : TimeText.iso8601(Date().timeIntervalSince1970))\"}\n"
        }.joined()
        let wrote = m.run("alice", ["-c", "cat >> \(own)"], program: "/bin/sh", stdin: .text(flood))
        #expect(wrote.status == 0, "\(wrote)")
        let log = m.run("alice", ["log", "--json"])
        let rows = log.stdoutText.split(separator: "\n")
        #expect(rows.contains { $0.contains("\"result\":\"failed\"") && $0.contains("\"source\":\"gate\"") }, "\(log)")
        #expect(!log.stdoutText.contains("2099-") && log.stderr.contains("50 lines of your state folder's log are stamped later than now"), "\(log.stderr)")
        // Made unreadable to vaultctl (a link): the gate's lines are still shown, with a word about the other.
        m.run("alice", ["-c", "mv \(own) \(own).aside && ln -s \(own).aside \(own)"], program: "/bin/sh")
        let broken = m.run("alice", ["log"])
        #expect(broken.status == 0 && broken.stdoutText.contains("gate  failed") && broken.stderr.contains("your state folder's log is not shown"), "\(broken)")
    }

    @Test func everyLineAskedForComesInAsManyAnswersAsItTakes() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        // Two generations of the gate's log, far more than one answer of 64 KiB holds (~600 lines).
        try writeGateFile("audit.log.1", lines(3000, minute: 1))
        try writeGateFile("audit.log", lines(3000, minute: 2))
        let r = m.run("alice", ["log", "--json", "--limit", "5000"])
        let rows = r.stdoutText.split(separator: "\n")
        let gate = rows.filter { $0.contains("\"source\":\"gate\"") }
        #expect(r.status == 0 && gate.count == 5000, "\(gate.count) \(r.stderr)")
        #expect(rows.first?.contains("\"slot\":\"s1-") == true, "\(rows.first ?? "")")
        #expect(gate.contains { $0.contains("\"slot\":\"s1-2999\"") } && gate.contains { $0.contains("\"slot\":\"s2-2999\"") })
        #expect(!gate.contains { $0.contains("\"slot\":\"s1-0\"") }, "only the newest 5000")
    }

    @Test func aFailureOutlivesStoresThatNeedNoPassword() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        #expect(m.run("alice", ["read", "mail", "--password-stdin"], stdin: .text("wrong\n")).status == 77)
        // A full generation in front of it and another behind: the next line rotates, and the one after drops
        // the generation that held the failure.
        let full = lines(7500, minute: 3)
        try writeGateFile("audit.log.1", m.asRoot("cat \(folder)/audit.log").stdoutText + full)
        try writeGateFile("audit.log", full)
        for i in 0..<2 {
            #expect(m.run("alice", ["store", "new\(i)"], stdin: .text("x")).status == 0)
            if i == 0 { try writeGateFile("audit.log", m.asRoot("cat \(folder)/audit.log").stdoutText + full) }
        }
        let shown = m.run("alice", ["log", "--json", "--limit", "100000"]).stdoutText
        #expect(shown.split(separator: "\n").contains { $0.contains("\"result\":\"failed\"") && $0.contains("\"source\":\"gate\"") },
                "the gate's failure was pushed out")
        #expect(m.asRoot("cat \(folder)/audit.kept").stdoutText.contains("\"result\":\"failed\""))
    }
}
