#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A rate-limit place that cannot be removed (here a folder named like a marker of a process that is gone)
/// is reported, never counted as a failure again and again.
@Suite("rate limit: a marker that cannot be removed", .tags(.needsServices))
struct StrayAttemptMarkerTests {
    @Test func aFolderNamedLikeAMarkerIsReportedAndNeverCounted() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("stray-marker")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        #expect(try sb.read(name).status == 0)
        let stray = "\(sb.stateFolder)/attempts/999999"
        try #require(mkdir(stray, 0o700) == 0)

        // More right-password reads than the failures allowed: each one says what is wrong, none is blocked.
        for i in 0..<4 {
            let r = try sb.readRepeatingRaces(name)
            #expect(r.status == 78 && r.stderr.contains(stray), "read \(i): \(r)")
            #expect(r.stdout.isEmpty, "read \(i)")
        }
        let limit = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(limit.utf8)) as? [String: Any]
        #expect((object?["failures"] as? [Any])?.isEmpty == true && object?["blockedUntil"] == nil,
                "nothing was counted: \(limit)")

        rmdir(stray)
        let r = try sb.readRepeatingRaces(name)
        #expect(r.status == 0 && r.stdoutText == "the-value", "\(r)")
    }
}
