/// What one fresh authentication is made of, and the one place its parts are put together, in the CLI (a
/// vault in the state folder) and in vaultctl-gate (a protected one) alike: PAM asking `user` through
/// `relay`, with `PAM_RHOST` from the command's judged origin and the policy's bound on the whole
/// authentication, under the rate limit of the vault's folder (`RateLimiter.audited`), which waits at most
/// `placeWait()` seconds for a place and says so with `say`. The two sides differ only in where the values
/// come from: the CLI reads the policy when a prompt is about to happen, the gate has read it already.
public struct Authentication: Sendable {
    /// Where PAM's questions and messages go: the CLI's password source, or the gate's relay to the CLI.
    public let relay: any PromptRelay
    public let user: String
    /// `PAM_RHOST`: the origin's host for a remote session, nil for a nearby one (asked when PAM starts).
    public let remoteHost: @Sendable () -> String?
    /// The bound on the whole authentication, what is said when it passes (nil: the caller says it), and what
    /// to do first when nothing was guessed by then (see `PAMGate.deadline`).
    public let deadline: @Sendable () -> (seconds: Int, message: String?, unguessed: (@Sendable () -> Void)?)
    public let placeWait: @Sendable () -> Double
    public let say: @Sendable (_ sentence: String) -> Void
    /// Built when a prompt is about to happen, so commands that never prompt never read the policy.
    public let limiter: @Sendable () throws(VaultError) -> RateLimiter
    /// A PAM transaction started ahead for this user (vaultctl-gate), or nil.
    public let started: PAMGate.Transaction?

    public init(relay: any PromptRelay, user: String, remoteHost: @escaping @Sendable () -> String?,
                deadline: @escaping @Sendable () -> (seconds: Int, message: String?, unguessed: (@Sendable () -> Void)?),
                placeWait: @escaping @Sendable () -> Double, say: @escaping @Sendable (_ sentence: String) -> Void,
                limiter: @escaping @Sendable () throws(VaultError) -> RateLimiter, started: PAMGate.Transaction? = nil) {
        self.relay = relay
        self.user = user
        self.remoteHost = remoteHost
        self.deadline = deadline
        self.placeWait = placeWait
        self.say = say
        self.limiter = limiter
        self.started = started
    }

    /// The person asked through PAM.
    public var pam: PAMGate {
        PAMGate(source: relay, user: user, remoteHost: remoteHost, deadline: deadline, started: started)
    }

    /// PAM under the rate limit: what both sides ask with.
    public var rateLimitedPAM: RateLimitedGate { gate(asking: pam) }

    /// `asking` (`pam`, or the gate's in-process tests' own gate) under the rate limit.
    public func gate(asking: any PresenceGate) -> RateLimitedGate {
        RateLimitedGate(asking, placeWait: placeWait, say: say, lazyLimiter: limiter)
    }
}
