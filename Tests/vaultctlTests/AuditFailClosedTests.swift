#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A gated command whose audit line cannot be written discloses nothing: the line is written before the
/// secret leaves, and the write itself is what is checked.
@Suite("audit log: fails closed", .tags(.needsServices))
struct AuditFailClosedTests {
    /// An audit log due for rotation whose old generation is a folder that cannot be replaced.
    static func unrotatableLog(_ sb: Sandbox) throws {
        let log = "\(sb.stateFolder)/audit.log"
        let line = Array(#"{"command":"read","origin":"local session","result":"ok","time":"2026-01-01T00:00:00Z"}"#.utf8) + [0x0a]
        var bytes: [UInt8] = []
        while bytes.count <= 1024 * 1024 { bytes += line }
        try #require(FileManager.default.createFile(atPath: log, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        try #require(mkdir("\(log).1", 0o700) == 0 && mkdir("\(log).1/inside", 0o700) == 0)
    }

    @Test func readAskpassAndSupplyDiscloseNothingWhenTheLineCannotBeWritten() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-closed")
        try sb.storeWithoutPAM(name, Array("audited-secret".utf8), mode: "device")
        #expect(try sb.vaultctl(["allow-supply", name, "on"]).status == 0)
        try Self.unrotatableLog(sb)
        let marker = "\(sb.root)/consumer-ran"
        for args in [["read", name], ["askpass", name], ["supply", name, "--", "/bin/sh", "-c", "cat > \(marker)"]] {
            let r = try sb.vaultctlCounted(args)
            #expect(r.status == 78, "\(args): \(r)")
            #expect(r.stdout.isEmpty, "\(args): nothing on stdout")
            #expect(r.stderr.contains("audit log could not be written") && r.stderr.contains("audit.log.1"), "\(args): \(r.stderr)")
            #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(args): one line: \(r.stderr)")
        }
        #expect(!Paths.exists(marker), "COMMAND never ran")
        // Once the old generation is gone the log rotates, and the read's line is there before its output.
        try FileManager.default.removeItem(atPath: "\(sb.stateFolder)/audit.log.1")
        let r = try sb.read(name)
        #expect(r.status == 0 && r.stdoutText == "audited-secret", "\(r)")
        let lines = FileText.read("\(sb.stateFolder)/audit.log")?.split(separator: "\n") ?? []
        #expect(lines.count == 1 && lines[0].contains(#""result":"ok""#), "one line after the rotation: \(lines)")
    }

    /// The log's lock held by another process: the read gives up with 75 (bounded), and prints nothing.
    @Test func readWithTheAuditLockHeldIsTryLaterAndDisclosesNothing() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-held")
        try sb.storeWithoutPAM(name, Array("audited-secret".utf8), mode: "device")
        #expect(try sb.read(name).status == 0)
        let holder = try LockWaitTests.Holder("\(sb.stateFolder)/.audit.lock")
        let r = try sb.read(name)
        #expect(r.status == 75 && r.stdout.isEmpty, "\(r)")
        #expect(r.stderr.contains("PID \(holder.pid)") && r.elapsed < .seconds(12), "\(r)")
    }
}
