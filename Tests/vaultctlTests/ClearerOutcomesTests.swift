import Foundation
import Testing
import TestSupport

/// Outcomes that say what is known in words that point the right way.
@Suite("clearer outcomes", .tags(.needsServices))
struct ClearerOutcomesTests {
    /// With no recovery code, `confirm-copied` and `show` point to `recovery generate`, not to `store`.
    @Test func withNoRecoveryCodeTheMessagesPointToGenerate() throws {
        let sb = try Sandbox(busAddress: "unix:path=/nonexistent")
        for args in [["recovery", "confirm-copied"], ["recovery", "show"]] {
            let r = try sb.vaultctlCounted(args)
            #expect(r.status == 66 || r.status == 69, "\(args): \(r)")
            if r.status == 66 {
                #expect(r.stderr.contains("vaultctl recovery generate") && !r.stderr.contains("vaultctl store"), "\(args): \(r.stderr)")
            }
        }
        let local = try Sandbox()
        let r = try local.vaultctlCounted(["recovery", "confirm-copied"])
        #expect(r.status == 66 && r.stderr.contains("vaultctl recovery generate") && !r.stderr.contains("vaultctl store"), "\(r)")
    }

    /// A block's end is given with its time zone (beside the audit log's UTC times), and how long is left.
    @Test func aBlockSaysWhenItEndsWithTheZone() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("blocked")
        try sb.storeWithoutPAM(name, Array("v".utf8), mode: "device")
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":1,"windowSeconds":300,"blockSeconds":300}}"#)
        _ = try sb.readRepeatingRaces(name, askpass: .wrong)
        let r = try sb.vaultctl(["read", name], overriding: ["TZ": "UTC"])
        #expect(r.status == 75, "\(r)")
        #expect(r.stderr.range(of: #"blocked until \d\d:\d\d:\d\d UTC \(in \d+ min"#, options: .regularExpression) != nil, "\(r.stderr)")
    }
}
