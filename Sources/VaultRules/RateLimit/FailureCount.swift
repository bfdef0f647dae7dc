/// The failures that are not PAM's but count against the same limit: a program given a secret that failed
/// with it (supply), an askpass request that came back (the delivery was not accepted). The rate limit in the
/// state folder, or the gate's in a protected vault.
public protocol FailureCount: Sendable {
    /// Throws `.blocked` while blocked.
    func check() throws(VaultError)
    /// Counts one failure; returns the end of the block it started, if it started one.
    @discardableResult
    func recordFailure() throws(VaultError) -> Double?
}

extension RateLimiter: FailureCount {}
