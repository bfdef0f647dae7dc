import GateProtocol
import Slots
import VaultRules
import Vault

/// The one place errors become words and exit codes.
enum ErrorReport {
    /// `failure`, but a slot found in neither slot that the mode record names as in the sync slot gets the
    /// words `status` uses (`Vault.notInRunningService`), not "empty": still 66.
    static func failure(_ error: VaultError, notHeldHere vault: Vault) -> CommandFailure {
        if case .slot(.empty(let name)) = error, let sentence = vault.notInRunningService(ifRecorded: name) {
            return CommandFailure(code: .noInput, message: "\(sentence) 'vaultctl store \(name)' here makes a new value; a copy in another keyring, if any, stays there.")
        }
        return failure(error)
    }

    /// The error's words and exit code, and its audit result from its case (`AuditResult(authentication:)`):
    /// a password judged wrong is "failed", a cancelled prompt "cancelled", whatever the words say.
    static func failure(_ error: VaultError) -> CommandFailure {
        let said = words(error)
        return CommandFailure(code: said.code, message: said.message, result: AuditResult(authentication: error))
    }

    private static func words(_ error: VaultError) -> CommandFailure {
        switch error {
        case .slot(let e): return failure(e)
        case .couldNotLook(let name, let e):
            let why: String
            switch e {
            case .serviceUnavailable(let reason), .locked(let reason): why = reason
            default: why = SlotErrorText.describe(e)
            }
            return CommandFailure(code: .unavailable, message:
                "Slot '\(name)' could not be looked up: the Secret Service could not be asked (\(why)), and the value may be there. Try again when the keyring is reachable.")
        case .authenticationFailed(let why):
            return CommandFailure(code: .denied, message: "Authentication failed: \(why).")
        case .notAuthenticated(let why):
            return CommandFailure(code: .denied, message: "Not authenticated: \(why).")
        case .accountRefused(let why):
            return CommandFailure(code: .denied, message: "\(why).")
        case .busy:
            return CommandFailure(code: .tryLater, message:
                "Another vaultctl is asking for your password right now and the attempts allowed are taken; try again in a moment.")
        case .lockHeld(let path, let holder, let seconds):
            return CommandFailure(code: .tryLater, message: lockHeld(path, holder, seconds))
        case .authenticationUnavailable(let why):
            return CommandFailure(code: .config, message: "Authentication is not possible: \(why).")
        case .authenticationTimedOut(let seconds):
            return CommandFailure(code: .tryLater, message:
                "The authentication did not finish within \(seconds.map { "\($0) s" } ?? "its bound") (prompt.authenticationSeconds): no finger on the reader or no key touched in time? Nothing was counted unless an answer had been given; try again.")
        case .configuration(let path, let detail):
            return CommandFailure(code: .config, message: "\(Quote.escaped(path, quotes: false)): \(detail).")
        case .badInput(let why):
            return CommandFailure(code: .dataError, message: why)
        case .changedMeanwhile(let name):
            return CommandFailure(code: .tryLater, message:
                "Another command changed slot '\(name)' while this one looked, so nothing was done without your password; run it again.")
        case .needsOption(let why):
            return CommandFailure(code: .usage, message: why)
        case .blocked(let until, let now):
            return CommandFailure(code: .tryLater, message:
                "Too many failed attempts: gated commands are blocked until \(TimeText.localClock(until)) (in \(TimeText.duration(until - now))); try again then.")
        case .authenticationFailedAndBlocked(let why, let until):
            return CommandFailure(code: .denied, message:
                "Authentication failed: \(why). That was too many failures: gated commands are blocked until \(TimeText.localClock(until)).")
        case .consumerFailedAndBlocked(let why, let until):
            return CommandFailure(code: .failure, message:
                "\(why). That was too many failures: gated commands are blocked until \(TimeText.localClock(until)).")
        case .refused(let why):
            return CommandFailure(code: .denied, message: "Refused: \(why).")
        case .vaultLocked:
            return CommandFailure(code: .denied, message: "The vault is locked; run 'vaultctl unlock' (from this machine) first.")
        case .consumerFailed(let why):
            return CommandFailure(code: .failure, message: "\(why).")
        case .alreadyUnlocked(let why):
            return CommandFailure(code: .ok, message: "\(why).")
        case .auditUnwritable:
            return CommandFailure(code: .failure, message: "The audit log could not be written, so the secret was not given out.")
        }
    }

    /// "Another vaultctl (PID 4711) has been changing slots …" or "… holds PATH …": who to wait for or stop.
    static func lockHeld(_ path: String, _ holder: LockHolder?, _ seconds: Int) -> String {
        let who: String
        switch holder {
        case let h? where h.command == "vaultctl": who = "Another vaultctl (PID \(h.pid))"
        case let h?: who = "Another process (PID \(h.pid)\(h.command.map { ", \(Quote.text($0))" } ?? ""))"
        case nil: who = "Another vaultctl"
        }
        if path.hasSuffix("/.changes.lock") {
            return "\(who) is changing slots (store, move or delete) and \(Quote.escaped(path)) was not free within \(seconds) s, so nothing was done; try again when it has finished, or stop it."
        }
        let waited = seconds > 0 ? " (waited \(seconds) s)" : ""
        return "\(who) holds \(Quote.escaped(path))\(waited); try again in a moment, or stop it."
    }

    /// An audit line that had to go out before a secret and could not: the log's own error, with its code
    /// (75 for a lock another process holds, 78 for an unsafe file, 1 otherwise), and that nothing left.
    static func auditFailure(_ error: VaultError) -> CommandFailure {
        let cause = failure(error)
        var why = cause.message
        if why.hasSuffix(".") { why.removeLast() }
        return CommandFailure(code: cause.code, message: "The audit log could not be written, so the secret was not given out: \(why).")
    }

    /// For `do` blocks that mix error types: a `CommandFailure` or `VaultError` as such, anything else as 1.
    static func unexpected(_ error: any Error) -> CommandFailure {
        if let e = error as? CommandFailure { return e }
        if let e = error as? VaultError { return failure(e) }
        if let e = error as? SlotError { return failure(e) }
        return CommandFailure(code: .failure, message: "Unexpected error: \(error).")
    }

    static func failure(_ error: SlotError) -> CommandFailure {
        let code: ExitCode
        switch error {
        case .empty: code = .noInput
        case .badSecretSize, .foreignMachine, .wrongSlot, .tampered, .tpmForeign: code = .dataError
        case .tpmUnavailable, .tpmCannotSeal, .noTPMToSeal, .gateHasNoTPM, .tpmHelperMissing: code = .unavailable
        case .tpmLockout: code = .tryLater
        case .unsafePermissions, .fleetNotConfigured: code = .config
        case .serviceUnavailable, .locked, .promptUnanswered, .gateUnavailable: code = .unavailable
        case .io: code = .failure
        }
        return CommandFailure(code: code, message: SlotErrorText.describe(error))
    }
}
