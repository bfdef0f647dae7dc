#if canImport(Testing)
import Foundation
import Synchronization

/// Runs closures on real threads at once (not a pool sized to the CPU count, which would run parallel
/// processes a few at a time) and returns their results in order.
public enum Parallel {
    public static func run<T: Sendable>(_ jobs: [@Sendable () -> T]) -> [T] {
        let results = Mutex<[Int: T]>([:])
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for (i, job) in jobs.enumerated() {
            group.enter()
            let thread = Thread {
                start.wait()
                let r = job()
                results.withLock { $0[i] = r }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        // Released together, so they really start at the same moment.
        for _ in jobs { start.signal() }
        group.wait()
        let all = results.withLock { $0 }
        return (0..<jobs.count).map { all[$0]! }
    }
}
#endif
