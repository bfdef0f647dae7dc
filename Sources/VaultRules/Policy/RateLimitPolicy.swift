/// How many failed attempts block gated commands, and for how long (the `rateLimit` section of the policy).
///
/// `failures` failures within `windowSeconds` block every gated command for `blockSeconds`. A parsed policy
/// keeps `failures` in 1...100 and both durations in 1...86400; this type itself does not check.
/// `Sendable`: plain integers.
public struct RateLimitPolicy: Sendable, Equatable {
    public var failures: Int
    public var windowSeconds: Int
    public var blockSeconds: Int

    public init(failures: Int, windowSeconds: Int, blockSeconds: Int) {
        self.failures = failures
        self.windowSeconds = windowSeconds
        self.blockSeconds = blockSeconds
    }
}
