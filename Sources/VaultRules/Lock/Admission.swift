/// The checks before a command of the CLI, or a request of `vaultctl-gate`, may prompt or change anything, in
/// their one order: the vault lock (a locked vault refuses, 77), then the audit log (it must take a line: no
/// line, no secret), then the rate limit (75 while blocked, before any prompt). Which checks apply is data on
/// both sides (the CLI's `CommandKind`, the gate's `GateRule`); the order is this type's alone, so the two
/// paths cannot drift apart.
public struct Admission: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let vaultLock = Admission(rawValue: 1 << 0)
    public static let auditLog = Admission(rawValue: 1 << 1)
    public static let rateLimit = Admission(rawValue: 1 << 2)

    /// Runs the checks this admission holds, in the order above; each side gives how it makes each check
    /// (and its own error type: the CLI's carries its reports).
    public func check<E: Error>(isLocked: () throws(E) -> Bool, locked: () -> E, auditLog: () throws(E) -> Void,
                                rateLimit: () throws(E) -> Void) throws(E) {
        if contains(.vaultLock), try isLocked() { throw locked() }
        if contains(.auditLog) { try auditLog() }
        if contains(.rateLimit) { try rateLimit() }
    }
}
