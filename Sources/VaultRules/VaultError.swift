import Slots

/// What the vault layer reports. The CLI turns each into one stderr line and a sysexits code in one place.
public enum VaultError: Error, Sendable {
    /// A slot backend failed; its own words say why.
    case slot(SlotError)
    /// The slot is not in the device slot and the sync slot could not be asked: we could not look.
    case couldNotLook(SlotName, SlotError)
    /// The presence check failed: wrong password, refused account, or no way to ask.
    case authenticationFailed(String)
    /// No password was tried: no way to ask, the askpass program could not run or was cancelled. Exit 77,
    /// but not counted by the rate limit.
    case notAuthenticated(String)
    /// The password was right but PAM's account check refused (expired, locked account). Exit 77, not counted.
    case accountRefused(String)
    /// Attempts in progress elsewhere use up the failures allowed; try again in a moment (75).
    case busy(retryAfter: Double)
    /// Another process held one of vaultctl's locks for longer than a wait for it lasts (75): a change
    /// (`.changes.lock`) or a file's own lock. `holder` is that process, when `/proc/locks` tells it.
    case lockHeld(path: String, holder: LockHolder?, seconds: Int)
    /// PAM itself is misconfigured or broken (not a wrong password).
    case authenticationUnavailable(String)
    /// The whole authentication took longer than `prompt.authenticationSeconds` (the seconds, when known):
    /// no finger on the reader, no key touched, nobody at the prompt. Not counted; exit 75.
    case authenticationTimedOut(seconds: Int?)
    /// A configuration file is unreadable or invalid.
    case configuration(path: String, detail: String)
    /// Too many failed attempts: every gated command is blocked until `until` (seconds since the epoch).
    case blocked(until: Double, now: Double)
    /// An authentication failure that was the one to start a block (reported as the failure, with the block
    /// mentioned). Not an `indirect` case wrapping the failure: Swift 6.3 miscompiles that under typed throws.
    case authenticationFailedAndBlocked(String, until: Double)
    /// A consumer failure that started a block.
    case consumerFailedAndBlocked(String, until: Double)
    /// A policy check refused the request before any prompt (not allowed, remote origin, target not locked…).
    case refused(String)
    /// `--if-locked` found the target already unlocked: nothing to supply. Not a failure (exit 0), so a
    /// script that unlocks idempotently can tell it from a refusal.
    case alreadyUnlocked(String)
    /// The vault is locked (`vaultctl lock`); only a few commands run until `vaultctl unlock`.
    case vaultLocked
    /// The program a secret was supplied to failed.
    case consumerFailed(String)
    /// The audit line that must go out before a secret does could not be written, so nothing was disclosed
    /// (the CLI says why).
    case auditUnwritable
    /// Another command stored a value for this slot while this one asked nothing (it found the slot empty),
    /// so it did not replace that value without a password (75).
    case changedMeanwhile(SlotName)
    /// The request needs an option it lacks to go ahead (`recovery generate --replace`): exit 64.
    case needsOption(String)
    /// The input is not usable (secrets that do not match when typed twice, …).
    case badInput(String)
}
