// Duration and ContinuousClock are in the concurrency module, which the release build of this target
// (`make release`) lacks.
#if canImport(Testing)
import Testing

/// The harness of the crash tests: chains of runs killed at random moments, side by side on threads of
/// their own until a time budget runs out, each chain checking what its kills left and reporting it
/// (`ChainReport`); the test's own thread then asserts what the chains found.
public enum KillLoop {
    /// The span, in microseconds, that kill delays are drawn from: the longest of a few whole runs,
    /// stretched a little, so kills land anywhere from the start to the end of a run on this machine at this
    /// moment, within fixed bounds.
    public static func window(longest: Duration, minimum: Duration = .milliseconds(20),
                              maximum: Duration = .milliseconds(250)) -> Int64 {
        Int64(min(max(minimum, longest * 1.2), maximum) / .microseconds(1))
    }

    /// Runs `chain` for each of `names` at once until `budget` has passed (each chain is given the
    /// deadline), then records every problem the chains found and expects that at least `minimumIterations`
    /// ran and that some `verb` was really killed mid-way (else the loop tested nothing). The chains' sums,
    /// and how long the loop took.
    public static func run(_ verb: String, chains names: [String], budget: Duration, minimumIterations: Int = 10,
                           sourceLocation: SourceLocation = #_sourceLocation,
                           chain: @escaping @Sendable (String, ContinuousClock.Instant) -> ChainReport) -> (all: ChainReport, took: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + budget
        let reports = Parallel.run(names.map { name in { chain(name, deadline) } })
        let all = ChainReport.merged(reports)
        for p in all.problems { Issue.record(Comment(rawValue: p), sourceLocation: sourceLocation) }
        #expect(all.done >= minimumIterations, "only \(all.done) iterations ran within \(budget)", sourceLocation: sourceLocation)
        #expect(all.killed > 0, "no \(verb) was killed mid-way (\(all.finished) finished): the loop tested nothing",
                sourceLocation: sourceLocation)
        return (all, clock.now - start)
    }
}
#endif
