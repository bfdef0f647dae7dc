import GateProtocol
import VaultRules

/// What the session's run loop does for a request before and around its verb's own work, as data: one row
/// a verb, applied in one place (`GateSession.answer`) in this order:
///
/// 1. `settles`: a verb that may have nothing to do (unlocking an unlocked vault, sealing what is sealed)
///    answers so from a look, before anything below (nothing is asked, counted or logged).
/// 2. `nearbyOnly`: the session's origin, judged once an exchange from what the gate sees, must be nearby
///    (what is refused otherwise, in the refusal's words).
/// 3. `permit`: an earlier authentication of this exchange must have opened what the verb changes.
/// 4. `folder` and `checks`: the user's folder made, then the vault lock, the audit log's check and the
///    rate limit (`Admission`, whose order the CLI's commands share), then the protected marker.
/// 5. the verb's own work, which may ask (PAM) only when `asks`, takes the slots' lock only when
///    `takesSlotsLock`, and writes its audit lines under `audit`.
///
/// OpenSSH's monitor is the model (`mon_dispatch`, with `MON_PERMIT` and `MON_AUTH` on each row; a grant
/// opening one read, its `MON_ONCE`, is the read's own rule): a verb's handler holds only its own work, and
/// a new verb gets its row from the exhaustive switch in `of(_:)`, so it cannot be added without saying what
/// it needs.
struct GateRule: Equatable, Sendable {
    /// An earlier authentication of this exchange the verb needs (`MON_PERMIT`).
    enum Permit: Equatable, Sendable {
        case always
        /// Any authentication of this exchange: `what` needs one first.
        case afterAuthentication(what: String)
        /// One that opened every slot (`device-key protect` asks so first).
        case afterEverySlot(what: String)
    }

    /// What the verb does to the user's folder of the store around the admission's checks.
    enum Folder: Equatable, Sendable {
        /// Nothing: a look answers from what is there.
        case untouched
        /// Made (bound to the account) when there is none, before the checks (the log and the rate limit are in it).
        case made
        /// Made, and after the checks marked protected: from then on the CLI uses the gate's store.
        case marked
    }

    var settles = false
    var nearbyOnly: String?
    var permit = Permit.always
    var folder = Folder.untouched
    /// The checks before the verb's work, in `Admission`'s order (the CLI's commands run the same ones).
    var checks: Admission = []
    /// Whether the verb may ask the person (PAM); `GateRequest.mayAsk` says the same to the CLI.
    var asks = false
    /// The command word of the verb's audit lines; nil: it writes none.
    var audit: String?
    /// Whether the verb changes the device slots, under the store's lock (`.slots.lock`).
    var takesSlotsLock = false

    /// Every check: what a gated request needs.
    static let every: Admission = [.vaultLock, .auditLog, .rateLimit]

    /// The row of a request's verb.
    static func of(_ request: GateRequest) -> GateRule {
        switch request {
        case .holding, .names, .log, .deviceKey:
            return GateRule()
        case .lock:
            return GateRule(folder: .marked, audit: "lock")
        case .recordFailure:
            return GateRule(folder: .made, audit: "failure")
        case .unlock:
            return GateRule(settles: true, nearbyOnly: "unlocking", folder: .made, checks: [.auditLog, .rateLimit], asks: true, audit: "unlock")
        case .authenticate:
            return GateRule(folder: .made, checks: every, asks: true, audit: "authenticate")
        case .read:
            return GateRule(folder: .made, checks: every, asks: true, audit: "read")
        case .store:
            return GateRule(folder: .marked, checks: every, asks: true, audit: "store", takesSlotsLock: true)
        case .delete:
            return GateRule(folder: .made, checks: every, asks: true, audit: "delete", takesSlotsLock: true)
        case .importValue:
            return GateRule(permit: .afterEverySlot(what: "moving a value in"), folder: .made, checks: every, audit: "import", takesSlotsLock: true)
        case .finishImport:
            return GateRule(permit: .afterEverySlot(what: "protecting the vault"), folder: .marked, audit: "protect")
        case .sealDeviceKey:
            return GateRule(settles: true, permit: .afterAuthentication(what: "sealing the device key"), folder: .made, checks: every,
                            audit: "seal", takesSlotsLock: true)
        }
    }
}
