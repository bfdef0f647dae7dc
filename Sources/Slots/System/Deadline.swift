#if canImport(Glibc)
import Glibc
#endif

/// A point in time (CLOCK_MONOTONIC) by which an operation must finish.
public struct Deadline: Sendable {
    let nanoseconds: UInt64

    public init(secondsFromNow seconds: Double) {
        nanoseconds = Deadline.now() &+ UInt64(max(0, seconds) * 1e9)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Microseconds left, rounded up, for sd-bus; 0 once passed.
    public var remainingMicroseconds: UInt64 {
        let now = Deadline.now()
        guard nanoseconds > now else { return 0 }
        return (nanoseconds - now + 999) / 1000
    }

    /// Milliseconds left, rounded up, for `poll`; 0 once passed.
    public var remainingMilliseconds: Int32 {
        let now = Deadline.now()
        guard nanoseconds > now else { return 0 }
        return Int32(min((nanoseconds - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
}
