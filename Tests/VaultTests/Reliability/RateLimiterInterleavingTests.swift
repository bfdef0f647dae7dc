import TestSupport
import Foundation
import Synchronization
import Testing
@testable import VaultRules

/// Failures recorded at nearly the same moment by limiters that each read the real clock and then wait for
/// the lock on `ratelimit.json` (threads here; processes in `ConcurrencyTests`). The one that read the clock
/// first may get the lock last; every failure must count all the same. A limiter that read "now" before
/// taking the lock saw the others' failures as coming from the future and dropped them.
@Suite("RateLimiter: failures recorded out of clock order")
struct RateLimiterInterleavingTests {
    /// Eight rounds: one round catches a lost failure about two times in three.
    @Test(arguments: 0..<8)
    func everyConcurrentFailureCountsWithTheRealClock(round: Int) throws {
        let folder = TemporaryFolder()
        let state = folder.appending("state")
        let threads = 24
        let policy = RateLimitPolicy(failures: threads, windowSeconds: 300, blockSeconds: 300)
        let blocksStarted = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
        let group = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            group.enter()
            Thread {
                go.wait()
                // Each its own limiter (its own lock file descriptor), as each process has.
                let limiter = RateLimiter(stateFolder: state, policy: policy, clock: SystemClock())
                do {
                    if try limiter.recordFailure() != nil { blocksStarted.add(1, ordering: .sequentiallyConsistent) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
                group.leave()
            }.start()
        }
        for _ in 0..<threads { go.signal() }
        group.wait()

        #expect(errors.withLock { $0 }.isEmpty)
        #expect(blocksStarted.load(ordering: .sequentiallyConsistent) == 1,
                "\(threads) failures with a limit of \(threads): exactly the last one starts the block")
        let limiter = RateLimiter(stateFolder: state, policy: policy, clock: SystemClock())
        #expect(try limiter.blockedUntil() != nil, "blocked: no failure was lost")
    }
}
