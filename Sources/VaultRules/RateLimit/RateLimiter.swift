#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Failed attempts shared by every vaultctl process of this user: `failures` within `windowSeconds` block
/// every gated command for `blockSeconds`. The state is `<state>/ratelimit.json`, updated under `flock`.
///
/// Failures expire only with the window: a success does not wipe them (otherwise an attacker who can make a
/// supply fail after a good password would never be blocked). An attempt in progress holds a place, so
/// parallel processes cannot get more guesses than the limit; a place whose process died after handing its
/// password over counts as a failure.
public struct RateLimiter: Sendable {
    let file: StateFile<Document>
    let markers: AttemptMarkers
    public let policy: RateLimitPolicy
    package let clock: any Clock
    /// Whether the process `pid` is still running, and is the one that started at `startTime` (the
    /// kernel's start time of a marker's process; nil when unknown). Injectable for tests.
    let isAlive: @Sendable (_ pid: Int32, _ startTime: UInt64?) -> Bool
    /// Told, once they are on disk, how many attempts were counted just now as failures because their process
    /// ended after its password was handed over (a guess killed before its verdict could be seen or written):
    /// the one who counts them writes their audit line, so no counted guess goes unlogged.
    public var abandoned: (@Sendable (_ count: Int) -> Void)?

    public init(stateFolder: String, policy: RateLimitPolicy, clock: any Clock = SystemClock(),
                isAlive: @escaping @Sendable (_ pid: Int32, _ startTime: UInt64?) -> Bool = RateLimiter.processIsAlive) {
        file = StateFile(folder: stateFolder, name: "ratelimit.json", empty: Document())
        markers = AttemptMarkers(folder: "\(stateFolder)/attempts")
        self.policy = policy
        self.clock = clock
        self.isAlive = isAlive
    }

    /// The real check: the pid exists (EPERM: it does, as another user's) and, when the marker knows its
    /// process's start time, it is that process and not a later one that got the same pid.
    /// A process that was killed and not yet reaped (a zombie: its parent has not waited for it, as a CLI
    /// whose gate was killed has not) is gone too: it will never give its place back.
    @Sendable public static func processIsAlive(_ pid: Int32, _ startTime: UInt64?) -> Bool {
        guard kill(pid, 0) == 0 || errno != ESRCH else { return false }
        guard let stat = AttemptMarkers.processStat(of: pid) else { return true }
        if stat.state == UInt8(ascii: "Z") || stat.state == UInt8(ascii: "X") { return false }
        guard let startTime else { return true }
        return stat.startTime == startTime
    }

    /// When the block ends, or nil when not blocked.
    public func blockedUntil() throws(VaultError) -> Double? {
        let doc = try file.load()
        guard let until = doc.blockedUntil, until > clock.now() else { return nil }
        return until
    }

    /// How many more failures the limit takes before it blocks, and until when the oldest counted one keeps
    /// counting (nil when none does): for the warning before the block.
    public func failuresLeft() throws(VaultError) -> (left: Int, until: Double?) {
        let doc = try file.load()
        let now = clock.now()
        let recent = doc.failures.filter { now - $0 < Double(policy.windowSeconds) && $0 <= now }
        return (max(0, policy.failures - recent.count), recent.min().map { $0 + Double(policy.windowSeconds) })
    }

    /// Throws `.blocked` while blocked.
    public func check() throws(VaultError) {
        if let until = try blockedUntil() { throw .blocked(until: until, now: clock.now()) }
    }

    /// Runs `change` on the document under its lock; the markers it names are removed once the document
    /// is written, still under the lock. A failure that a marker turned into is on disk before the marker
    /// is gone: a kill in between counts it twice at worst, never not at all. A marker that cannot be
    /// removed is reported (the command fails saying so), never passed over in silence to be counted again.
    private func update<R>(_ change: (inout Document, inout Settlement) throws(SlotError) -> R) throws(VaultError) -> R {
        var settled = Settlement()
        let result = try file.update({ (doc) throws(SlotError) -> R in try change(&doc, &settled) }, committed: { () throws(SlotError) in
            for marker in settled.gone { try markers.remove(marker) }
        })
        if settled.abandoned > 0 { abandoned?(settled.abandoned) }
        return result
    }

    /// What settling the places found: the markers of processes that are gone (removed once the document is
    /// written), and how many of them had handed their password over (counted as failures).
    struct Settlement {
        var gone: [AttemptMarkers.Marker] = []
        var abandoned = 0
    }

    /// Counts one failure; returns the end of the block this failure started, if it started one.
    @discardableResult
    public func recordFailure() throws(VaultError) -> Double? {
        // "now" is read under the lock: read before it, a later failure another process recorded while this
        // one waited would look like it came from the future and be dropped.
        try update { (doc, settled) throws(SlotError) -> Double? in
            let now = clock.now()
            try settle(&doc, now: now, gone: &settled)
            return fail(&doc, now: now)
        }
    }

    /// Takes a place for an attempt about to prompt: throws `.blocked` while blocked, or while recent
    /// failures plus attempts in progress already reach the limit.
    public func beginAttempt(pid: Int32 = getpid()) throws(VaultError) {
        let limit = policy.failures
        let refusal = try update { (doc, settled) throws(SlotError) -> VaultError? in
            let now = clock.now()
            let inFlight = try settle(&doc, now: now, gone: &settled)
            if let until = doc.blockedUntil, until > now { return .blocked(until: until, now: now) }
            if doc.failures.count + inFlight >= limit {
                if inFlight == 0 {
                    // Only recent failures (fewer than a block's worth) and none in progress cannot reach here;
                    // kept for safety: wait for the oldest to leave the window.
                    return .blocked(until: (doc.failures.min() ?? now) + Double(policy.windowSeconds), now: now)
                }
                return .busy(retryAfter: 1)
            }
            try markers.create(pid)
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Notes that the attempt in progress has handed its password over.
    public func markAnswered(pid: Int32 = getpid()) throws(VaultError) {
        do { try markers.markAnswered(pid) } catch { throw .slot(error) }
    }

    /// Takes back `markAnswered` made in advance: the attempt gave nothing, so its place does not count if
    /// the process ends before it gives the place back.
    public func markAsking(pid: Int32 = getpid()) throws(VaultError) {
        do { try markers.markAsking(pid) } catch { throw .slot(error) }
    }

    /// Gives the place back; a failed attempt counts. Returns the end of a block this failure started.
    @discardableResult
    public func endAttempt(failed: Bool, pid: Int32 = getpid()) throws(VaultError) -> Double? {
        guard failed else {
            do { try markers.remove(markers.own(pid)) } catch { throw .slot(error) }
            return nil
        }
        // The failure is written first and the place given back after it (see `update`).
        let own = markers.own(pid)
        return try update { (doc, settled) throws(SlotError) -> Double? in
            let now = clock.now()
            try settle(&doc, now: now, gone: &settled, except: own)
            settled.gone.append(own)
            return fail(&doc, now: now)
        }
    }

    /// Drops failures outside the window and ends an expired block; returns how many attempts are in
    /// progress, and adds to `gone` the markers of processes that are gone (removed once this is written).
    /// Such a place becomes a failure if its password had been handed over (killing a slow answer must not
    /// hide a wrong guess); one abandoned at the prompt (Ctrl-C) is dropped. Places are the markers, and the
    /// `pending` list that vaultctl versions before them wrote.
    @discardableResult
    private func settle(_ doc: inout Document, now: Double, gone: inout Settlement,
                        except own: AttemptMarkers.Marker? = nil) throws(SlotError) -> Int {
        if let until = doc.blockedUntil, until <= now { doc.blockedUntil = nil }
        var inFlight = 0
        if let pending = doc.pending {
            let left = pending.filter { !isAlive($0.pid, nil) }
            doc.pending = pending.filter { isAlive($0.pid, nil) }
            if doc.pending?.isEmpty == true { doc.pending = nil }
            for p in left where p.answered == true {
                doc.failures.append(p.time)
                gone.abandoned += 1
            }
            inFlight += doc.pending?.count ?? 0
        }
        for marker in try markers.all() where marker.pid != own?.pid || marker.startTime != own?.startTime {
            if isAlive(marker.pid, marker.startTime) {
                inFlight += 1
            } else {
                gone.gone.append(marker)
                if marker.answered {
                    doc.failures.append(now)
                    gone.abandoned += 1
                }
            }
        }
        doc.failures = doc.failures.filter { now - $0 < Double(policy.windowSeconds) && $0 <= now }
        if doc.failures.count >= policy.failures && doc.blockedUntil == nil {
            doc.failures = []
            doc.blockedUntil = now + Double(policy.blockSeconds)
        }
        return inFlight
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
/// an attempt in progress holds a place so parallel attempts get no more guesses than the limit. When the
/// places are all taken by attempts in progress, it waits for one (at most `placeWait()` seconds, saying
/// so once through `waiting`) instead of refusing: parallel reads with the right password then all run.
public struct RateLimitedGate: PresenceGate {
    let inner: any PresenceGate
    /// Built when a prompt is about to happen, so commands that never prompt never read the policy.
    let makeLimiter: @Sendable () throws(VaultError) -> RateLimiter
    let placeWait: @Sendable () -> Double
    /// Says the place-wait sentence (`placeWaitSentence`) where the person sees it: the CLI's terminal, or
    /// the gate's relay to the CLI.
    let say: @Sendable (_ sentence: String) -> Void
    /// Writes what became of an attempt (nil: it succeeded) before the verdict is given and the place given
    /// back (the gate's audit line); a throw withholds the verdict.
    public var recordVerdict: (@Sendable (_ failure: VaultError?) throws(VaultError) -> Void)?
    /// Whether the place counts as a failure if the process ends before giving it back, from the moment it is
    /// taken rather than from the first answer (vaultctl-gate: a module such as pam_fprintd reaches its verdict
    /// with nothing answered, and a program that kills the gate the moment it learns a finger did not match
    /// must not get that guess for free). The gate takes it back when the attempt gave nothing.
    public var countsIfInterrupted = false

    public init(_ inner: any PresenceGate, limiter: RateLimiter, placeWait: @escaping @Sendable () -> Double = { 0 },
                say: @escaping @Sendable (_ sentence: String) -> Void = { _ in }) {
        self.inner = inner
        makeLimiter = { limiter }
        self.placeWait = placeWait
        self.say = say
    }

    public init(_ inner: any PresenceGate, placeWait: @escaping @Sendable () -> Double = { 0 },
                say: @escaping @Sendable (_ sentence: String) -> Void = { _ in },
                lazyLimiter: @escaping @Sendable () throws(VaultError) -> RateLimiter) {
        self.inner = inner
        makeLimiter = lazyLimiter
        self.placeWait = placeWait
        self.say = say
    }

    /// What a person is told while every place is taken, in the CLI and through the gate alike.
    public static func placeWaitSentence(_ seconds: Int) -> String {
        "other vaultctl commands are asking for your password; waiting for one to finish (at most \(seconds) s)."
    }

    /// Takes a place, waiting while attempts in progress hold them all (`busy`), up to the bound.
    func takePlace(_ limiter: RateLimiter) throws(VaultError) {
        var deadline: Deadline?
        var pause: UInt32 = 20_000
        while true {
            do throws(VaultError) {
                try limiter.beginAttempt()
                return
            } catch {
                guard case .busy = error else { throw error }
                if deadline == nil {
                    let seconds = placeWait()
                    deadline = Deadline(secondsFromNow: seconds)
                    if seconds > 0 { say(Self.placeWaitSentence(Int(seconds.rounded(.up)))) }
                }
                guard let deadline, deadline.remainingMilliseconds > 0 else { throw error }
                usleep(pause)
                pause = min(pause * 2, 250_000)
            }
        }
    }

    public func verify(reason: String) throws(VaultError) {
        try verify(reason: reason, slots: nil)
    }

    public func verify(reason: String, slots: [SlotName]?) throws(VaultError) {
        let limiter = try makeLimiter()
        try takePlace(limiter)
        if countsIfInterrupted {
            do { try limiter.markAnswered() } catch {
                _ = try? limiter.endAttempt(failed: false)
                throw .authenticationUnavailable("vaultctl could not record this attempt (is the disk full?), so it was not made; free some room and try again")
            }
        }
        var failure: VaultError?
        do {
            if let reporting = inner as? any AnswerReportingGate {
                try reporting.verify(reason: reason, onAnswer: { (try? limiter.markAnswered()) != nil })
            } else {
                try inner.verify(reason: reason, slots: slots)
            }
        } catch {
            failure = error
        }
        var failed = false
        if case .authenticationFailed? = failure { failed = true }
        // A verdict that cannot be recorded is not given: whichever it was, the same refusal, and the place
        // (marked answered) stays for a later attempt to count as a failure.
        let unrecorded = VaultError.authenticationUnavailable("vaultctl could not record this attempt (is the disk full?), so its result is not given; free some room and try again")
        if let recordVerdict {
            do { try recordVerdict(failure) } catch { throw unrecorded }
        }
        let until: Double?
        do { until = try limiter.endAttempt(failed: failed) } catch { throw unrecorded }
        if case .authenticationFailed(let why)? = failure, let until {
            throw .authenticationFailedAndBlocked(why, until: until)
        }
        // The failure before the block says so (sudo says how many tries were wrong, pam_faillock how many are
        // left): a person who knows can stop and look before being shut out for the block's length.
        if case .authenticationFailed(let why)? = failure, let (left, until) = try? limiter.failuresLeft(), left == 1, let until {
            throw .authenticationFailed("\(why). One more failure before \(TimeText.localClock(until)) blocks gated commands for \(TimeText.duration(Double(limiter.policy.blockSeconds)))")
        }
        if let failure { throw failure }
    }
}
