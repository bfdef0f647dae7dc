import Foundation
@testable import VaultRules

/// A `Clock` that stands still until a test moves it, so rate-limit windows and blocks can be crossed
/// without waiting.
///
/// `@unchecked Sendable`: `Clock` requires `Sendable`; the time is read and written only while `lock` is held.
final class FakeClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var time: Double

    /// A fixed, recent starting point (2027-01-15), far from zero so "now - window" stays positive.
    init(_ start: Double = 1_800_000_000) {
        time = start
    }

    func now() -> Double {
        lock.lock()
        defer { lock.unlock() }
        return time
    }

    /// Moves the clock forward by `seconds`.
    func advance(_ seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        time += seconds
    }
}
