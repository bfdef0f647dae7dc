import GateProtocol

/// What the session's run loop does for a request before and around its verb's own work, as data: one row
/// a verb, applied in one place (`GateSession.answer`) in this order:
///
/// 1. `settles`: a verb that may have nothing to do (unlocking an unlocked vault, sealing what is sealed)
///    answers so from a look, before anything below (nothing is asked, counted or logged).
/// 2. `nearbyOnly`: the session's origin, judged once an exchange from what the gate sees, must be nearby
///    (what is refused otherwise, in the refusal's words).
/// 3. `permit`: an earlier authentication of this exchange must have opened what the verb changes.
/// 4. `admission`: the vault lock, the user's folder, the audit log's check and the rate limit, in that
///    order, then the protected marker.
/// 5. the verb's own work, which may ask (PAM) only when `asks`, takes the slots' lock only when
///    `takesSlotsLock`, and writes its audit lines under `audit`.
///
/// OpenSSH's monitor is the model (`mon_dispatch`, with `MON_PERMIT`, `MON_AUTH` and `MON_ONCE` on each
/// row): a verb's handler holds only its own work, and a new verb gets its row from the exhaustive switch
/// in `of(_:)`, so it cannot be added without saying what it needs.
struct GateRule: Equatable, Sendable {
    /// An earlier authentication of this exchange the verb needs (`MON_PERMIT`).
    enum Permit: Equatable, Sendable {
        case always
        /// Any authentication of this exchange: `what` needs one first.
        case afterAuthentication(what: String)
        /// One that opened every slot (`device-key protect` asks so first).
        case afterEverySlot(what: String)
    }

    /// The checks before a verb's work, each one the run loop's; applied in the order of the list.
    struct Admission: OptionSet, Sendable {
        let rawValue: Int
        /// The vault lock: a locked vault refuses (77).
        static let checksLock = Admission(rawValue: 1 << 0)
        /// The user's folder, made (bound to the account) when there is none.
        static let makesFolder = Admission(rawValue: 1 << 1)
        /// The audit log must take a line (no line, no secret), and the rate limit must not block.
        static let checksAuditAndLimit = Admission(rawValue: 1 << 2)
        /// From now on the vault is protected (the CLI uses the gate's store).
        static let marksProtected = Admission(rawValue: 1 << 3)

        static let none: Admission = []
        /// What every prompt needs: the folder, the log's check, the rate limit.
        static let beforePrompt: Admission = [.makesFolder, .checksAuditAndLimit]
        /// What every gated request needs: the lock, then what every prompt needs.
        static let full: Admission = [.checksLock, .makesFolder, .checksAuditAndLimit]
    }

    var settles = false
    var nearbyOnly: String?
    var permit = Permit.always
    var admission = Admission.none
    /// Whether the verb may ask the person (PAM); `GateRequest.mayAsk` says the same to the CLI.
    var asks = false
    /// The command word of the verb's audit lines; nil: it writes none.
    var audit: String?
    /// Whether the verb changes the device slots, under the store's lock (`.slots.lock`).
    var takesSlotsLock = false

    /// The row of a request's verb.
    static func of(_ request: GateRequest) -> GateRule {
        switch request {
        case .holding, .names, .log, .deviceKey:
            return GateRule()
        case .lock:
            return GateRule(admission: [.makesFolder, .marksProtected], audit: "lock")
        case .recordFailure:
            return GateRule(admission: .makesFolder, audit: "failure")
        case .unlock:
            return GateRule(settles: true, nearbyOnly: "unlocking", admission: .beforePrompt, asks: true, audit: "unlock")
        case .authenticate:
            return GateRule(admission: .full, asks: true, audit: "authenticate")
        case .read:
            return GateRule(admission: .full, asks: true, audit: "read")
        case .store:
            return GateRule(admission: Admission.full.union(.marksProtected), asks: true, audit: "store", takesSlotsLock: true)
        case .delete:
            return GateRule(admission: .full, asks: true, audit: "delete", takesSlotsLock: true)
        case .importValue:
            return GateRule(permit: .afterEverySlot(what: "moving a value in"), admission: .full, audit: "import", takesSlotsLock: true)
        case .finishImport:
            return GateRule(permit: .afterEverySlot(what: "protecting the vault"), admission: [.makesFolder, .marksProtected], audit: "protect")
        case .sealDeviceKey:
            return GateRule(settles: true, permit: .afterAuthentication(what: "sealing the device key"), admission: .full,
                            audit: "seal", takesSlotsLock: true)
        }
    }
}
