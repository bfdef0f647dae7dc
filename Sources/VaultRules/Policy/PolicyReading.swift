/// The one way a policy is read: the user's own file read once, and the policies made from it, each named
/// for what its callers need and what a file with a problem (one that cannot be read, or does not parse)
/// gives them.
///
/// - `strict()`: the user's own, a problem an error. What the commands show and judge, the rate limiter
///   and the change gates of a vault without the gate: a policy that cannot be read must stop them, said.
/// - `forPrompt()`: the user's own, a problem the built-in one. What is read as a prompt is about to
///   happen (the origin's ranges, the whole authentication's bound, the askpass bound, the wait for a
///   place): the rate limiter refused such a policy before, and a malformed policy.json must not stop
///   status, list, store or delete, which read none of these.
/// - `effective()`: root's (`RootPolicy`) tightened by the user's, as the gate enforces it. A user's file
///   with a problem tightens nothing (a program running as the user could write it to stop the gate);
///   root's with a problem is an error.
/// - `effectiveForPrompt()`: `effective()` for a prompt about to happen; root's with a problem gives
///   `forPrompt()` (the gate refuses that root policy itself, before it asks anything).
///
/// Each call reads root's file again, and the user's file is read when this is made: a caller that needs
/// the policy at the moment it acts makes its reading then.
package struct PolicyReading: Sendable {
    /// The user's policy file as it was read: its policy, nil when there is none, or why it cannot be used.
    private let own: Result<Policy?, VaultError>
    /// Reads root's policy: `RootPolicy.load`, another only in a test (root's own file needs root).
    private let root: @Sendable () throws(VaultError) -> Policy

    /// Reads `<configFolder>/policy.json` now (`Policy.usersOwn`).
    package init(configFolder: String,
                 root: @escaping @Sendable () throws(VaultError) -> Policy = { () throws(VaultError) in try RootPolicy.load() }) {
        own = Result { () throws(VaultError) -> Policy? in try Policy.usersOwn(configFolder: configFolder) }
        self.root = root
    }

    /// The user's own policy, or the built-in one when there is no file; a file with a problem throws.
    package func strict() throws(VaultError) -> Policy {
        try own.get() ?? .builtIn
    }

    /// The user's own policy, or the built-in one when there is no file or it has a problem.
    package func forPrompt() -> Policy {
        guard case .success(let policy?) = own else { return .builtIn }
        return policy
    }

    /// Root's policy tightened by the user's; a user's file with a problem tightens nothing, root's throws.
    package func effective() throws(VaultError) -> Policy {
        let rootPolicy = try root()
        guard case .success(let user?) = own else { return rootPolicy }
        return rootPolicy.tightened(by: user)
    }

    /// `effective()`, or `forPrompt()` when root's policy has a problem.
    package func effectiveForPrompt() -> Policy {
        do { return try effective() } catch { return forPrompt() }
    }
}
