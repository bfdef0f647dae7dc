import Foundation
import Testing
import TestSupport

/// Parallel gated commands with the right password all run: a command that finds every rate-limit place
/// taken by prompts in progress waits (bounded, saying so) for one, instead of refusing with 75.
@Suite("rate limit: parallel right-password reads wait for a place", .tags(.needsServices))
struct ParallelReadsTests {
    @Test func sixParallelReadsOfOneSlotWithTheRightPasswordAllSucceed() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("parallel")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        let program = "\(sb.root)/askpass-slow"
        // A person who takes a second to answer: six prompts are open at once, three places.
        try ChildBoundsTests.writeScript(program, "sleep 1\nprintf '%s\\n' '\(Fixtures.pamPassword)'\n")
        let env = try sb.environment(askpass: .correct).merging(["VAULT_ASKPASS": program]) { $1 }
        let results = Parallel.run((0..<6).map { _ in
            { Sandbox.repeatingPAMWrapperStartFailures {
                ProcessRunner.run(Paths.vaultctl, ["read", name], environment: env, timeout: .seconds(60)).droppingPAMWrapperNoise()
            } }
        })
        for r in results {
            #expect(r.status == 0 && r.stdoutText == "the-value", "\(r)")
        }
        #expect(results.contains { $0.stderr.contains("waiting for one to finish") }, "a read said it waits: \(results.map(\.stderr))")
        let limit = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? ""
        #expect(limit.contains(#""failures":[]"#), "nothing counted: \(limit)")
    }
}
