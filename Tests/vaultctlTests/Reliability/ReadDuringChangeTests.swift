#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Reads hold the change lock shared while they look, so a read that runs while stores keep moving the value
/// between the two slots finds it in one of them: it never answers "empty" (66) or a Secret Service error for
/// a value that is there all along. A change that holds the lock too long makes a look give up (75), not hang.
@Suite("reads during mode changes", .tags(.needsServices))
struct ReadDuringChangeTests {
    @Test func readsFindTheValueWhileStoresAlternateModes() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("flip")
        let value = ReliabilityData.value("\(name)-v", count: 512)
        try sb.storeWithoutPAM(name, value, mode: "device")
        // The stores replace the value without PAM (they run without pam_wrapper; see `relaxChangeGates`).
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":100},"gate":{"storeOver":false,"delete":false}}"#)
        let storeEnv = sb.environmentWithoutPAM()
        let readEnv = try sb.environment(askpass: .correct)
        let vaultctl = Paths.vaultctl
        let storesDone = Flag()

        enum Outcome: Sendable {
            case stored([ProcessResult])
            case reads([ProcessResult])
        }
        let jobs: [@Sendable () -> Outcome] = [
            {
                var results: [ProcessResult] = []
                for i in 0..<30 {
                    let mode = i % 2 == 0 ? "sync" : "device"
                    results.append(ProcessRunner.run(vaultctl, ["store", name, "--mode", mode], environment: storeEnv,
                                                     stdin: .bytes(value)))
                }
                storesDone.set()
                return .stored(results)
            },
            {
                var reads: [ProcessResult] = []
                while !storesDone.isSet || reads.count < 5 {
                    reads.append(Sandbox.gatedRun(["read", name], environment: readEnv))
                    if reads.count > 300 { break }
                }
                return .reads(reads)
            },
        ]
        for outcome in Parallel.run(jobs) {
            switch outcome {
            case .stored(let results):
                for r in results { #expect(r.status == 0, "store: \(r)") }
            case .reads(let reads):
                let failed = reads.filter { $0.status != 0 || $0.stdout != value }
                #expect(failed.isEmpty, "\(failed.count) of \(reads.count) reads did not return the value: \(failed.prefix(3))")
            }
        }
    }

    /// A store stopped in the middle (here: the test holding the change lock exclusively) does not hang reads
    /// and status: they wait a bounded while, then say a change is in progress (75), before any prompt.
    @Test func aChangeThatHoldsTheLockTooLongIsTryLaterNotAHang() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("held")
        try sb.storeWithoutPAM(name, Array("held-value".utf8), mode: "device")
        let fd = open("\(sb.stateFolder)/.changes.lock", O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX) == 0)

        let status = try sb.vaultctl(["status", name])
        #expect(status.status == 75, "\(status)")
        #expect(status.stderr.contains("changing slots"), "\(status.stderr)")
        #expect(status.elapsed < .seconds(15), "\(status.elapsed)")
        let counted = try sb.vaultctlCounted(["read", name])
        #expect(counted.status == 75, "\(counted)")
        #expect(sb.askpassCalls == 0, "no prompt while the change is in progress")

        flock(fd, LOCK_UN)
        let after = try sb.read(name)
        #expect(after.status == 0 && after.stdout == Array("held-value".utf8), "\(after)")
    }
}
