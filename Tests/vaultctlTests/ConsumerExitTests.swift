import Foundation
import Testing
import TestSupport

/// How a failing COMMAND is reported: what is known ("exited N after reading the secret", counted), and a
/// COMMAND that never read its stdin is said so and not counted.
@Suite("supply: a COMMAND that fails", .tags(.needsServices))
struct ConsumerExitTests {
    static func failures(_ sb: Sandbox) throws -> Int {
        let text = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? #"{"failures":[]}"#
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return (object?["failures"] as? [Any])?.count ?? 0
    }

    @Test func aCommandThatReadTheSecretAndFailedCountsOneThatNeverReadItDoesNot() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("consumer")
        try sb.storeSuppliable(name, Array("the-value".utf8))

        let unread = try sb.vaultctlCounted(["supply", name, "--", "/bin/sh", "-c", "exit 3"])
        #expect(unread.status == 1, "\(unread)")
        #expect(unread.stderr.contains("exited 3 without reading the secret") && unread.stderr.contains("not counted"), "\(unread.stderr)")
        #expect(try Self.failures(sb) == 0, "not counted")

        let read = try sb.vaultctlCounted(["supply", name, "--", "/bin/sh", "-c", "cat >/dev/null; exit 3"])
        #expect(read.status == 1, "\(read)")
        #expect(read.stderr.contains("exited 3 after reading the secret"), "\(read.stderr)")
        #expect(try Self.failures(sb) == 1, "a rejected secret counts")
    }
}
