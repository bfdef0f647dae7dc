#if canImport(Glibc)
import Glibc
#endif

/// A bounded wait for something a test expects to happen: a file appearing, a process ending, a clipboard
/// emptied. It replaces a fixed sleep, which is either too short on a loaded machine (the test fails for
/// nothing) or too long everywhere else (the suite waits for nothing). The caller asserts what it returns,
/// so a behaviour that never comes still fails the test, after `seconds` and not forever.
public enum Wait {
    /// Whether `condition` held within `seconds`, asked at once and then every `interval` seconds.
    public static func until(seconds: Double, interval: Double = 0.02, _ condition: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + seconds
        while true {
            if condition() { return true }
            if monotonicSeconds() >= deadline { return false }
            usleep(UInt32(interval * 1_000_000))
        }
    }

    /// CLOCK_MONOTONIC in seconds (not ContinuousClock: `make release` builds this target too, without the
    /// implicit concurrency module).
    static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
