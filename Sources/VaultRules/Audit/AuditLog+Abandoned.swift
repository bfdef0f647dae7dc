extension AuditLog {
    /// The reason of the line for an attempt the rate limit counted because its process ended after its
    /// password was handed over, before its verdict could be written.
    public static let abandonedReason = "an authentication ended after its password was given, before its verdict was written (counted as a failure)"

    /// Writes a `failed` line for each such attempt (`RateLimiter.abandoned`), as best it can: whoever counts
    /// a killed guess logs it, so a program that kills its gate between the answer and the verdict gets no
    /// unlogged guesses. Its origin is unknown: the process that asked is gone.
    public func appendAbandoned(_ count: Int, time: String) {
        for _ in 0..<min(count, 100) {
            try? append(AuditEntry(time: time, command: "authenticate", slot: nil, origin: "unknown (the process that asked is gone)",
                                   result: "failed", reason: Self.abandonedReason))
        }
    }
}
