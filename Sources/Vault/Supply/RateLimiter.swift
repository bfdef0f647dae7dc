/// Failed attempts shared by every vaultctl process of this user: `failures` within `windowSeconds` block
/// every gated command for `blockSeconds`. The state is `<state>/ratelimit.json`, updated under `flock`.
public struct RateLimiter: Sendable {
    struct Document: Codable, Sendable {
        var version = 1
        var failures: [Double] = []
        var blockedUntil: Double?
    }

    let file: StateFile<Document>
    public let policy: RateLimitPolicy
    let clock: any Clock

    public init(stateFolder: String, policy: RateLimitPolicy, clock: any Clock = SystemClock()) {
        file = StateFile(folder: stateFolder, name: "ratelimit.json", empty: Document())
        self.policy = policy
        self.clock = clock
    }

    /// When the block ends, or nil when not blocked.
    public func blockedUntil() throws(VaultError) -> Double? {
        let doc = try file.load()
        guard let until = doc.blockedUntil, until > clock.now() else { return nil }
        return until
    }

    /// Throws `.blocked` while blocked.
    public func check() throws(VaultError) {
        if let until = try blockedUntil() { throw .blocked(until: until, now: clock.now()) }
    }

    /// Counts one failure; returns the end of the block this failure started, if it started one.
    @discardableResult
    public func recordFailure() throws(VaultError) -> Double? {
        let now = clock.now()
        let policy = self.policy
        return try file.update { doc in
            doc.failures = doc.failures.filter { now - $0 < Double(policy.windowSeconds) && $0 <= now }
            doc.failures.append(now)
            if doc.failures.count >= policy.failures {
                doc.failures = []
                doc.blockedUntil = now + Double(policy.blockSeconds)
                return doc.blockedUntil
            }
            return nil
        }
    }

    /// A success clears the count of failures.
    public func recordSuccess() throws(VaultError) {
        let doc = try file.load()
        guard !doc.failures.isEmpty || doc.blockedUntil != nil else { return }
        try file.update { doc in
            doc.failures = []
            doc.blockedUntil = nil
        }
    }
}

/// The presence gate with the rate limit around it: blocked → no prompt; a failed authentication counts.
public struct RateLimitedGate: PresenceGate {
    let inner: any PresenceGate
    let limiter: RateLimiter

    public init(_ inner: any PresenceGate, limiter: RateLimiter) {
        self.inner = inner
        self.limiter = limiter
    }

    public func verify(reason: String) throws(VaultError) {
        try limiter.check()
        var failure: VaultError?
        do {
            try inner.verify(reason: reason)
        } catch {
            failure = error
        }
        if case .authenticationFailed(let why)? = failure {
            if let until = try limiter.recordFailure() {
                throw .authenticationFailedAndBlocked(why, until: until)
            }
        }
        if let failure { throw failure }
        try limiter.recordSuccess()
    }
}
