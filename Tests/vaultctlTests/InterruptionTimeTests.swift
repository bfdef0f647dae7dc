@testable import vaultctl
import Testing
@testable import GateProtocol
import Vault
@testable import VaultRules

/// The time a Ctrl-C's audit line carries is written in its signal handler by arithmetic alone; it must be
/// the log's own format for the same second (`TimeText.iso8601`, strftime's), on any day.
@Suite("Ctrl-C's audit time")
struct InterruptionTimeTests {
    @Test(arguments: [Int64(0), 951_782_400, 1_709_164_799, 1_796_225_184, 4_102_444_800, 253_402_300_799])
    func theHandlersTimeIsTheLogsFormat(_ seconds: Int64) {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 20)
        defer { p.deallocate() }
        Interruption.writeTime(seconds, into: p)
        let written = String(decoding: UnsafeBufferPointer(start: p, count: 20), as: UTF8.self)
        #expect(written == TimeText.iso8601(Double(seconds)), "\(seconds)")
    }
}
