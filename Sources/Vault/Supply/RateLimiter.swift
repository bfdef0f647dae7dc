#if canImport(Glibc)
import Glibc
#endif

/// Failed attempts shared by every vaultctl process of this user: `failures` within `windowSeconds` block
/// every gated command for `blockSeconds`. The state is `<state>/ratelimit.json`, updated under `flock`.
///
/// Failures expire only with the window: a success does not wipe them (otherwise an attacker who can make a
/// supply fail after a good password would never be blocked). An attempt in progress (a prompt shown,
/// no answer yet) holds a place, so parallel processes cannot get more guesses than the limit; a place whose
/// process died without answering counts as a failure.
public struct RateLimiter: Sendable {
    struct Pending: Codable, Sendable, Equatable {
        var pid: Int32
        var time: Double
    }

    struct Document: Codable, Sendable {
        var version = 1
        var failures: [Double] = []
        var pending: [Pending]? = nil
        var blockedUntil: Double?
    }

    let file: StateFile<Document>
    public let policy: RateLimitPolicy
    let clock: any Clock
    /// Whether a process is still running (injectable for tests).
    let isAlive: @Sendable (Int32) -> Bool

    public init(stateFolder: String, policy: RateLimitPolicy, clock: any Clock = SystemClock(),
                isAlive: @escaping @Sendable (Int32) -> Bool = { kill($0, 0) == 0 || errno != ESRCH }) {
        file = StateFile(folder: stateFolder, name: "ratelimit.json", empty: Document())
        self.policy = policy
        self.clock = clock
        self.isAlive = isAlive
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
        return try file.update { doc in
            settle(&doc, now: now)
            return fail(&doc, now: now)
        }
    }

    /// Takes a place for an attempt about to prompt: throws `.blocked` while blocked, or while recent
    /// failures plus attempts in progress already reach the limit.
    public func beginAttempt(pid: Int32 = getpid()) throws(VaultError) {
        let now = clock.now()
        let limit = policy.failures
        let refusal: VaultError? = try file.update { doc in
            settle(&doc, now: now)
            if let until = doc.blockedUntil, until > now { return .blocked(until: until, now: now) }
            let inFlight = doc.pending ?? []
            if doc.failures.count + inFlight.count >= limit {
                // The earliest moment a place frees up: the oldest failure leaving the window.
                let until = (doc.failures.min() ?? now) + Double(policy.windowSeconds)
                return .blocked(until: inFlight.isEmpty ? until : now + 1, now: now)
            }
            doc.pending = inFlight + [Pending(pid: pid, time: now)]
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Gives the place back; a failed attempt counts. Returns the end of a block this failure started.
    @discardableResult
    public func endAttempt(failed: Bool, pid: Int32 = getpid()) throws(VaultError) -> Double? {
        let now = clock.now()
        return try file.update { doc in
            if let i = doc.pending?.firstIndex(where: { $0.pid == pid }) { doc.pending?.remove(at: i) }
            if doc.pending?.isEmpty == true { doc.pending = nil }
            settle(&doc, now: now)
            return failed ? fail(&doc, now: now) : nil
        }
    }

    /// Drops failures outside the window and ends an expired block; a pending place whose process is gone
    /// becomes a failure.
    private func settle(_ doc: inout Document, now: Double) {
        if let until = doc.blockedUntil, until <= now { doc.blockedUntil = nil }
        if let pending = doc.pending {
            let gone = pending.filter { !isAlive($0.pid) }
            doc.pending = pending.filter { isAlive($0.pid) }
            if doc.pending?.isEmpty == true { doc.pending = nil }
            for p in gone { doc.failures.append(p.time) }
        }
        doc.failures = doc.failures.filter { now - $0 < Double(policy.windowSeconds) && $0 <= now }
        if doc.failures.count >= policy.failures && doc.blockedUntil == nil {
            doc.failures = []
            doc.blockedUntil = now + Double(policy.blockSeconds)
        }
    }

    private func fail(_ doc: inout Document, now: Double) -> Double? {
        if let until = doc.blockedUntil, until > now { return nil }
        doc.failures.append(now)
        if doc.failures.count >= policy.failures {
            doc.failures = []
            doc.blockedUntil = now + Double(policy.blockSeconds)
            return doc.blockedUntil
        }
        return nil
    }
}

/// The presence gate with the rate limit around it: blocked → no prompt; a failed authentication counts;
/// an attempt in progress holds a place so parallel attempts get no more guesses than the limit.
public struct RateLimitedGate: PresenceGate {
    let inner: any PresenceGate
    let limiter: RateLimiter

    public init(_ inner: any PresenceGate, limiter: RateLimiter) {
        self.inner = inner
        self.limiter = limiter
    }

    public func verify(reason: String) throws(VaultError) {
        try limiter.beginAttempt()
        var failure: VaultError?
        do {
            try inner.verify(reason: reason)
        } catch {
            failure = error
        }
        var failed = false
        if case .authenticationFailed? = failure { failed = true }
        let until = try limiter.endAttempt(failed: failed)
        if case .authenticationFailed(let why)? = failure, let until {
            throw .authenticationFailedAndBlocked(why, until: until)
        }
        if let failure { throw failure }
    }
}
