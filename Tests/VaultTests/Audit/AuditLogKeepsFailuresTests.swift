import TestSupport
import Foundation
import Testing
@testable import VaultRules

/// The log's generations: two of 1 MiB, and the failures and refusals of older ones carried to `audit.kept`,
/// so that lines that need no password, however many, never push a failure out (issue 36, point 14).
@Suite struct AuditLogKeepsFailuresTests {
    let folder = TemporaryFolder()

    func entry(_ i: Int, _ result: String) -> AuditEntry {
        AuditEntry(time: String(format: "2026-12-07T%02d:%02d:%02dZ", i / 3600, (i / 60) % 60, i % 60), command: "store", slot: "s\(i)",
                   origin: "local session", result: result, reason: result == "ok" ? nil : "try \(i)")
    }

    @Test func aFailureOutlivesAnyNumberOfLinesThatNeedNoPassword() throws {
        let log = AuditLog(folder: folder.path)
        try log.append(entry(0, "failed"))
        try log.append(entry(1, "refused"))
        // Three generations' worth of ordinary lines: both rotations pass, the first generation is dropped.
        var i = 2
        while (try? FileManager.default.attributesOfItem(atPath: "\(folder.path)/audit.kept")) == nil || i < 30_000 {
            try log.append(entry(i, "ok"))
            i += 1
            if i > 60_000 { break }
        }
        let all = try log.entries(limit: 100_000)
        #expect(all.first?.slot == "s0" && all.first?.result == "failed", "\(all.prefix(2))")
        #expect(all.dropFirst().first?.slot == "s1" && all.dropFirst().first?.result == "refused")
        #expect(!all.contains { $0.slot == "s2" }, "ordinary lines of a dropped generation are not kept")
        #expect(all.last?.slot == "s\(i - 1)")
        // Pages: the newest N after leaving out the newest K, oldest first.
        let page = try log.entries(limit: 3, skip: 2)
        #expect(page.map(\.slot) == ["s\(i - 5)", "s\(i - 4)", "s\(i - 3)"])
        #expect(try log.entries(limit: 10, skip: 100_000).isEmpty)
    }

    @Test func theKeptFailuresStayUnderTheirBoundAndSayWhatTheyDropped() throws {
        let log = AuditLog(folder: folder.path)
        // A kept file already at its bound, then a generation of failures carried to it.
        let old = (0..<9_000).map { i in String(decoding: AuditLog.line(entry(i, "failed")), as: UTF8.self) }.joined()
        try old.write(toFile: "\(folder.path)/audit.kept", atomically: true, encoding: .utf8)
        chmod("\(folder.path)/audit.kept", 0o600)
        for i in 9_000..<29_000 { try log.append(entry(i, i % 2 == 0 ? "failed" : "ok")) }
        let kept = try #require(try? Data(contentsOf: URL(fileURLWithPath: "\(folder.path)/audit.kept")))
        #expect(kept.count <= AuditLog.rotateAt + 512, "\(kept.count)")
        let entries = kept.withUnsafeBytes { AuditLog.parse($0) }
        let first = try #require(entries.first)
        #expect(first.result == "trimmed" && first.reason?.contains("older lines of refusals and failures were dropped") == true, "\(first)")
        #expect(entries.map(\.time) == entries.map(\.time).sorted(), "the kept file stays in time order")
    }

    /// Refusals (which a program can make without a password) go before failures when the kept file is full.
    @Test func refusalsArePushedOutBeforeFailures() throws {
        let log = AuditLog(folder: folder.path)
        try log.append(entry(0, "failed"))
        // Generations full of refusals, far more than audit.kept holds.
        for i in 1..<40_000 { try log.append(entry(i, "refused")) }
        let all = try log.entries(limit: 1_000_000)
        #expect(all.contains { $0.slot == "s0" && $0.result == "failed" }, "the failure was pushed out by refusals")
        let trimmed = try #require(all.first { $0.result == "trimmed" })
        #expect(Int(trimmed.reason?.prefix { $0.isNumber } ?? "") ?? 0 > 1000, "\(trimmed)")
    }
}
