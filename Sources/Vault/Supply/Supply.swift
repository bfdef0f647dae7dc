import GateProtocol
import Slots
import VaultRules

/// What the ordered supply checks need: the per-slot permission, where the request comes from, the rate
/// limit, and (optionally) the target's own "am I still locked?" check.
public struct SupplyChecks: Sendable {
    public let permissions: SupplyState
    public let origin: Origin
    public let limiter: any FailureCount
    public let target: TargetCheck?
    let clock: any Clock

    public init(permissions: SupplyState, origin: Origin, limiter: any FailureCount, target: TargetCheck?,
                clock: any Clock = SystemClock()) {
        self.permissions = permissions
        self.origin = origin
        self.limiter = limiter
        self.target = target
        self.clock = clock
    }
}

extension Vault {
    /// Hands the secret in `name` to `deliver`, only after, in this order: the slot allows supply; the origin
    /// is nearby; the rate limit does not block; the target is still locked — each refused before any
    /// prompt — then PAM, then the target check again right before delivery.
    ///
    /// `deliver` returns nil on success or a description of the consumer's failure; a failure counts
    /// against the rate limit. An error `deliver` throws (before handing anything over: the audit line
    /// could not be written) is passed on and not counted. On success the slot's last supply (time, origin) is recorded.
    public func supply(_ name: SlotName, checks: SupplyChecks, reason: PromptReason? = nil,
                       deliver: (SecretBytes) throws(VaultError) -> String?) throws(VaultError) {
        guard try checks.permissions.isAllowed(name) else {
            throw .refused("slot '\(name)' may not be supplied to other programs; allow it with 'vaultctl allow-supply \(name) on'")
        }
        guard checks.origin.verdict == .nearby else {
            throw .refused("this request comes from a remote session (\(checks.origin.description)); supply secrets only from this machine or the local network")
        }
        try checks.limiter.check()
        if let target = checks.target {
            let (locked, status) = target.stillLocked()
            guard locked else {
                throw .alreadyUnlocked("the target is already unlocked (the --if-locked check exited \(status)); nothing was supplied")
            }
        }
        let (mode, locked) = try steadily { () throws(VaultError) in try locate(name, beforeRead: true) }
        if locked {
            throw .slot(slot(mode).lockedValue("slot '\(name)'"))
        }
        try gate.verify(reason: (reason ?? .supply(name)).text, slots: [name])
        let secret = try steadily { () throws(VaultError) -> SecretBytes in try readAfterGate(name, from: mode) }
        // The last check, immediately before delivery.
        if let target = checks.target {
            let (stillLocked, status) = target.stillLocked()
            guard stillLocked else {
                throw .alreadyUnlocked("the target was unlocked while you authenticated (the --if-locked check exited \(status)); nothing was supplied")
            }
        }
        var failure = try deliver(secret)
        // A consumer that exits 0 without accepting the secret (a stale password handed to a program that
        // does not say so) leaves the target locked: with a target check, that counts as a failed supply.
        if failure == nil, let target = checks.target, !target.unlockedSoon() {
            failure = "the command exited 0 but the target is still locked (the --if-locked check still exits 0), so the secret was not accepted"
        }
        if let failure {
            if let until = try checks.limiter.recordFailure() {
                throw .consumerFailedAndBlocked(failure, until: until)
            }
            throw .consumerFailed(failure)
        }
        try checks.permissions.recordSupply(name, time: checks.clock.now(), origin: checks.origin.description)
    }
}
