extension RateLimiter {
    /// The rate limit of the vault in `folder` as both sides use it (the CLI for a vault in the state folder,
    /// vaultctl-gate for a protected one): its attempts counted in that folder, and a guess whose process
    /// ended after its password was given logged there as `failed` (`AuditLog.appendAbandoned`), so that no
    /// counted guess goes unlogged whichever side finds it.
    public static func audited(folder: String, policy: RateLimitPolicy, clock: any Clock) -> RateLimiter {
        var limiter = RateLimiter(stateFolder: folder, policy: policy, clock: clock)
        let audit = AuditLog(folder: folder)
        limiter.abandoned = { count in audit.appendAbandoned(count, time: TimeText.iso8601(clock.now())) }
        return limiter
    }
}
