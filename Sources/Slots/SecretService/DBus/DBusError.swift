#if canImport(Glibc)
import Glibc
#endif

/// What can go wrong talking to a bus. The Secret Service slot turns these into `SlotError`s with words.
enum DBusError: Error, Equatable, Sendable {
    /// No session bus address to connect to.
    case noAddress
    /// No address could be connected to (the last reason).
    case cannotConnect(String)
    /// The bus refused our credentials.
    case authenticationRejected
    /// Nothing came back before the deadline.
    case timedOut
    /// The bus closed the connection.
    case disconnected
    /// The peer broke the protocol.
    case protocolError(String)
    /// An error reply: its D-Bus name and text.
    case remote(name: String, message: String)
}

/// A point in time (CLOCK_MONOTONIC) by which an operation must finish.
struct Deadline: Sendable {
    let nanoseconds: UInt64

    init(secondsFromNow seconds: Double) {
        nanoseconds = Deadline.now() &+ UInt64(max(0, seconds) * 1e9)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Milliseconds left, rounded up, for `poll`; 0 once passed.
    var remainingMilliseconds: Int32 {
        let now = Deadline.now()
        guard nanoseconds > now else { return 0 }
        return Int32(min((nanoseconds - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
}
