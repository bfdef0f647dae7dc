import Foundation
import Testing

/// Reads take no lock. A read that runs while stores keep moving the value between the two slots must still
/// find it: it may look a second time, but it never answers "empty" (66) or a Secret Service error for a
/// value that is there all along.
@Suite("reads during mode changes")
struct ReadDuringChangeTests {
    @Test func readsFindTheValueWhileStoresAlternateModes() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("flip")
        let value = ReliabilityData.value("\(name)-v", count: 512)
        try sb.storeWithoutPAM(name, value, mode: "device")
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":100}}"#)
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
}
