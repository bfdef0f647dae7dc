#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Vault
@testable import VaultRules

/// The race between an answer going to PAM and the authentication's deadline taking the attempt's place
/// back: decided once, so that a guess PAM judged is never given back (issue 36, point 12).
@Suite struct GuessRaceTests {
    @Test func aGuessMadeFirstKeepsThePlaceFromTheDeadline() {
        let race = GuessRace()
        #expect(race.claimGuess())
        #expect(!race.expire(), "the deadline must not take back a place whose answer went to PAM")
        #expect(race.claimGuess(), "a second question of the same stack still gets its answer")
        #expect(race.guessed)
    }

    @Test func aDeadlineFirstStopsEveryLaterAnswer() {
        let race = GuessRace()
        #expect(race.expire())
        #expect(!race.claimGuess(), "no answer may reach PAM once the place was taken back")
        #expect(race.expire())
        #expect(!race.guessed)
    }

    /// Two threads released together, thousands of times: exactly one side wins each race, and never both,
    /// which a look followed by an act (the earlier flag) allowed.
    @Test func exactlyOneSideWinsEveryRace() {
        final class Outcome: @unchecked Sendable {
            var claimed = false, expired = false
        }
        for _ in 0..<2_000 {
            let race = GuessRace()
            let outcome = Outcome()
            let start = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
            pthread_barrier_init(start, nil, 2)
            let other = BarrierThread(start) { outcome.expired = race.expire() }
            pthread_barrier_wait(start)
            outcome.claimed = race.claimGuess()
            other.join()
            pthread_barrier_destroy(start)
            start.deallocate()
            #expect(outcome.claimed != outcome.expired, "claimed \(outcome.claimed), expired \(outcome.expired)")
        }
    }
}

/// A thread that waits at `barrier` and then runs `work`; joined by `join()`.
private final class BarrierThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let barrier: UnsafeMutablePointer<pthread_barrier_t>
    private let work: () -> Void

    init(_ barrier: UnsafeMutablePointer<pthread_barrier_t>, _ work: @escaping () -> Void) {
        self.barrier = barrier
        self.work = work
        let me = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { raw in
            let me = Unmanaged<BarrierThread>.fromOpaque(raw!).takeRetainedValue()
            pthread_barrier_wait(me.barrier)
            me.work()
            return nil
        }, me)
    }

    func join() { pthread_join(thread, nil) }
}
