/// Which changes that cannot be undone need a fresh authentication first: the policy's `gate` section.
///
/// Both default to true. Replacing a recovery code that is marked as written down is gated whatever these
/// say (and needs `--replace`): the code is the one way back into an account.
public struct ChangeGates: Sendable, Equatable {
    /// `gate.storeOver`: a `store` (or `recovery generate`) that replaces a value already there.
    public var storeOver: Bool
    /// `gate.delete`: a `delete` of a value that is there (or may be).
    public var delete: Bool

    public init(storeOver: Bool, delete: Bool) {
        self.storeOver = storeOver
        self.delete = delete
    }

    /// The default: every destructive change is gated.
    public static let all = ChangeGates(storeOver: true, delete: true)
}
