#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time in seconds since the epoch; injectable so the rate limit can be tested without waiting.
public protocol Clock: Sendable {
    func now() -> Double
}

/// The real clock. The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
public struct SystemClock: Clock {
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Time as people read it, for messages ("12:34:56 CET") and the audit log ("2026-11-29T12:34:56Z").
public enum TimeText {
    /// Local time with its zone ("12:34:56 CET"), so it reads beside the UTC times of the audit log.
    public static func localClock(_ t: Double) -> String { format(t, "%H:%M:%S %Z", utc: false) }
    public static func iso8601(_ t: Double) -> String { format(t, "%Y-%m-%dT%H:%M:%SZ", utc: true) }

    /// "4 min 10 s", "12 s".
    public static func duration(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded(.up)))
        if s >= 60 { return s % 60 == 0 ? "\(s / 60) min" : "\(s / 60) min \(s % 60) s" }
        return "\(s) s"
    }

    private static func format(_ t: Double, _ pattern: String, utc: Bool) -> String {
        var seconds = time_t(t)
        var parts = tm()
        if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
