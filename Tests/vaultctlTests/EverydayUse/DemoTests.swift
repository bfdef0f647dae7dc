import Testing
import TestSupport

/// `make demo`'s tour (scripts/demo.sh) run with the built binary: every step does what it shows, or the
/// script exits non-zero (issue 25, point 1: its deletes once ran outside the demo's PAM stack and failed
/// while the demo still exited 0).
@Suite("the demo", .tags(.needsServices))
struct DemoTests {
    @Test func theDemoRunsEveryStepAsItShows() throws {
        let r = ProcessRunner.run(Paths.tool("bash"), ["\(Paths.repositoryRoot)/scripts/demo.sh", Paths.vaultctl],
                                  environment: Fixtures.baseEnvironment, timeout: .seconds(120))
        #expect(r.status == 0, "\(r)")
        let out = r.stdoutText
        #expect(!out.contains("!!") && !r.stderr.contains("!!"), "a step went wrong: \(out) \(r.stderr)")
        #expect(out.contains("correct horse\n  (exit 0)"), "the gated read printed the secret: \(out)")
        #expect(out.contains("vaultctl delete wifi") && out.contains("== done"), "\(out)")
        #expect(out.contains("(exit 66)"), "the deleted slot is gone: \(out)")
    }

    /// A binary that does nothing it should: the demo says which steps went wrong and fails.
    @Test func theDemoFailsWhenAStepDoesNotDoWhatItShows() throws {
        let sb = try Sandbox()
        let broken = "\(sb.root)/broken-vaultctl"
        try sb.writeScript(broken, "exit 3\n")
        let r = ProcessRunner.run(Paths.tool("bash"), ["\(Paths.repositoryRoot)/scripts/demo.sh", broken],
                                  environment: Fixtures.baseEnvironment, timeout: .seconds(120))
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("the demo went wrong in"), "\(r.stderr)")
    }
}
