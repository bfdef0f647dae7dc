#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// One exchange with the CLI (one command of it): a `hello`, then requests, each answered `ok` or
/// `refused`, until the CLI closes its end. What each request needs before its verb's own work (the vault
/// lock, the audit log's check, the rate limit, an earlier authentication, a nearby origin) is its verb's
/// row in `GateRule`, applied here in one place (`answer`); the verbs' own work is in GateSession+Verbs.swift.
/// An authentication takes a place of the rate limit, runs PAM as the real user with its questions relayed to
/// the CLI, and writes its audit line before anything it opens is used.
///
/// A person who authenticated in this exchange is not asked again in it (a `move` reads, writes and removes
/// after one prompt): the exchange is one command of the CLI, on pipes only that process holds, and the
/// next command starts a new one, which asks again.
public final class GateSession {
    let store: GateStore
    let user: String
    /// Which account the store's folder belongs to (its record, and the id in the home): checked before the
    /// hello, bound when the folder is made.
    let account: GateAccount
    let machine: MachineIdentity
    /// Reads root's policy tightened by the user's, once an exchange: at the first request that needs it (a
    /// look needs none, so `status` does not wait for it), or right after the hello when vaultctl said its
    /// command authenticates (`expectsAuthentication`). A policy that cannot be read refuses every request
    /// that needs it.
    let readPolicy: () throws(VaultError) -> Policy
    private var readPolicyResult: Result<Policy, VaultError>?
    /// The TPM root chose in gate.conf (never the caller's).
    let tpm: TPMChoice?
    let clock: any Clock
    let reader: GateFrameReader
    let output: Int32
    let relay: GateRelay
    /// What the person's authentications in this exchange (one command of the CLI, on the CLI's own pipes)
    /// opened: these slots, or every slot (`device-key protect`).
    var granted: Set<SlotName> = []
    /// The slots read in this exchange since their last authentication: each grant opens one read.
    var readOnce: Set<SlotName> = []
    var grantedEverySlot = false
    /// Whether any authentication in this exchange succeeded (for changes to the store as a whole, which
    /// open no slot: sealing its key by the TPM).
    var authenticatedOnce = false

    func isGranted(_ name: SlotName) -> Bool { grantedEverySlot || granted.contains(name) }

    /// The row of the request being answered (`answer` sets it): what its work may do (ask, take the slots'
    /// lock) and the command word of its audit lines.
    var rule = GateRule()

    /// The account id of this exchange's folder, once its record was seen to name this account (or was
    /// written): until then nothing goes into the folder.
    var boundID: String?

    /// Makes the gate that asks the person: PAM, always, but in the session's in-process tests, which give
    /// a gate of their own (the rate limit, the audit line and the grants around it stay the session's).
    var makeGate: (Authentication) -> any PresenceGate = { $0.pam }

    /// How long the CLI may be silent between requests (a person typing a new secret after the prompt).
    static let idleSeconds = 300.0
    /// How long a `store`'s value may take to arrive after its request.
    static let valueSeconds = 30.0

    /// Whether vaultctl said a request of this exchange may authenticate: then what an authentication needs
    /// is made ready before the first request, while vaultctl does its own work, instead of after it: the
    /// origin's evidence from the gate's start (`prepareToAuthenticate`), libpam, the PAM transaction and the
    /// policy right after the hello. It changes when that work is done, never what a
    /// request does: the policy and the origin are read once per exchange either way, and an error reading
    /// them is kept for the request that needs them.
    let expectsAuthentication: Bool

    /// What `prepareToAuthenticate` started at the gate's start, if it did: taken (waited for) where the
    /// origin is judged, and before the policy is read.
    let prepared: BackgroundThread.Later<OriginEvidence>?

    /// The user's PAM transaction, started after the hello when a request will authenticate
    /// (`makeReadyToAuthenticate`), for the first authentication to take.
    var transaction: PAMGate.Transaction?

    /// Started by the gate at its start when vaultctl said its command authenticates, once the start-up
    /// checks have cleared what the caller handed over: the evidence of where the session comes from (its
    /// parents, the terminal's utmp record), gathered on a thread of its own while this one does the rest of
    /// the start and the hello. It reads /proc and utmp and depends on neither the request nor the policy;
    /// the policy (the user's is read with the group dropped, which glibc applies to every thread) is read
    /// only after it is done. Loading libpam and starting PAM stay on this thread: a `dlopen` that fails for
    /// want of memory can leave the loader's lock held by the thread that called it (glibc 2.36), which on a
    /// thread that then ends would hang every later `dlopen`, and `exit`.
    public static func prepareToAuthenticate() -> BackgroundThread.Later<OriginEvidence> {
        BackgroundThread.later { SystemOriginProbe().gather() }
    }

    public init(store: GateStore, user: String, home: String, machine: MachineIdentity, policy: @escaping () throws(VaultError) -> Policy, tpm: TPMChoice?,
                clock: any Clock = SystemClock(), input: Int32 = 0, output: Int32 = 1, expectsAuthentication: Bool = false,
                prepared: BackgroundThread.Later<OriginEvidence>? = nil) {
        account = GateAccount(folder: store.folder, user: user, home: home, uid: store.uid)
        self.expectsAuthentication = expectsAuthentication
        self.prepared = prepared
        self.store = store
        self.tpm = tpm
        self.user = user
        self.machine = machine
        readPolicy = policy
        self.clock = clock
        reader = GateFrameReader(fd: input)
        self.output = output
        // A person has as long as an askpass program has (set when the policy is read), and a little more
        // for the CLI's own work.
        relay = GateRelay(reader: reader, output: output, answerSeconds: Double(Policy.builtIn.askpassSeconds) + 5)
    }

    var policy: Policy {
        get throws(VaultError) {
            if readPolicyResult == nil {
                // The user's policy is read with the group dropped, which glibc applies to every thread: the
                // prepared work is done first, so the drop never overlaps it.
                _ = prepared?.value()
                do throws(VaultError) {
                    let p = try readPolicy()
                    relay.answerSeconds = Double(p.askpassSeconds) + 5
                    readPolicyResult = .success(p)
                } catch {
                    readPolicyResult = .failure(error)
                }
            }
            return try readPolicyResult!.get()
        }
    }

    /// The device slot, its key made for this account (`DeviceKeyAccount`): known once the folder's record was
    /// checked or written, which comes before anything is read from or written to the folder.
    var slot: SealedFileSlot {
        SealedFileSlot(folder: store.folder, machine: machine, tpm: tpm, account: boundID.map(DeviceKeyAccount.init(id:)))
    }
    var vaultLock: VaultLock { VaultLock(folder: store.folder) }
    var audit: AuditLog { AuditLog(folder: store.folder) }
    var limiter: RateLimiter {
        get throws(VaultError) {
            RateLimiter.audited(folder: store.folder, policy: try policy.rateLimit, clock: clock)
        }
    }

    /// Runs the exchange; the exit status.
    public func run() -> Int32 {
        // A store that cannot be looked at is an error, never "new": a vault from before would be used instead.
        // The hello says whether the vault is protected and locked, so most commands need no request before
        // their first real one (the lock is checked again by every gated request).
        // A folder of an earlier account with this uid is refused before anything in it is looked at.
        do { try checkAccount() } catch {
            GateFrame(.refused, text: GateRefusal.encode(error)).write(to: output)
            return 77
        }
        let protected: Bool, locked: Bool
        do { (protected, locked) = (try store.isProtected(), try vaultLock.isLocked()) } catch {
            GateFrame(.refused, text: GateRefusal.encode(error)).write(to: output)
            return 69
        }
        let hello = "\(GateRequest.version) \(protected ? "protected" : "new") \(locked ? "locked" : "unlocked")"
        guard GateFrame(.hello, text: hello).write(to: output) else { return 74 }
        if expectsAuthentication && protected { makeReadyToAuthenticate() }
        while true {
            let frame: GateFrame
            switch reader.next(within: Self.idleSeconds) {
            case .failure(.endOfInput): return 0
            case .failure(.timedOut): return 75
            case .failure: return 65
            case .success(let f): frame = f
            }
            guard frame.word == .request, let request = GateRequest.parse(frame.text) else {
                GateFrame(.refused, text: GateRefusal.encode(.badInput("vaultctl-gate got something that is not a request of protocol version \(GateRequest.version)"))).write(to: output)
                return 64
            }
            // A store's value comes right after its request: read it before any check can refuse, so a
            // refusal never leaves it to be taken for the next request.
            var value: SecretBytes?
            switch request {
            case .store, .importValue:
                switch reader.next(within: Self.valueSeconds) {
                case .success(let f) where f.word == .secret: value = f.payload
                default:
                    GateFrame(.refused, text: GateRefusal.encode(.badInput("vaultctl-gate got no value after the \(request.verb) request"))).write(to: output)
                    return 64
                }
            default: break
            }
            let reply: GateFrame
            do throws(VaultError) {
                reply = GateFrame(.ok, body: try answer(request, value: value))
            } catch {
                reply = GateFrame(.refused, text: GateRefusal.encode(error))
            }
            if relay.broken || !reply.write(to: output) { return 74 }
        }
    }

    /// Answers one request: its verb's row (`GateRule`), in the row's order, then the verb's own work.
    func answer(_ request: GateRequest, value: SecretBytes?) throws(VaultError) -> GatePayload {
        rule = GateRule.of(request)
        if rule.settles, let answer = try settled(request) { return answer }
        if let what = rule.nearbyOnly {
            // Judged here, from what the gate sees (its parents, the terminal's utmp record; no variable of
            // the caller's): a program running as you cannot make a remote session look nearby.
            let origin = try judgedOrigin
            guard origin.verdict == .nearby else {
                log(nil, "refused", reason: "remote origin (\(origin.description))")
                throw .refused("\(what) needs a session on this machine or the local network, and this one is remote (\(origin.description))")
            }
        }
        switch rule.permit {
        case .always: break
        case .afterAuthentication(let what):
            guard authenticatedOnce else { throw .notAuthenticated("\(what) needs an authentication first") }
        case .afterEverySlot(let what):
            guard grantedEverySlot else { throw .notAuthenticated("\(what) needs an authentication for every slot first") }
        }
        try admit(rule)
        return try work(request, value: value)
    }

    /// A row's admission: the folder made, the checks in `Admission`'s order (the vault lock, the audit log,
    /// the rate limit), then the folder marked protected.
    func admit(_ rule: GateRule) throws(VaultError) {
        if rule.folder != .untouched { try ensureStore(marking: false) }
        try rule.checks.check(isLocked: { () throws(VaultError) in try vaultLock.isLocked() }, locked: { .vaultLocked },
                              auditLog: { () throws(VaultError) in try audit.checkWritable() },
                              rateLimit: { () throws(VaultError) in try limiter.check() })
        if rule.folder == .marked { try ensureStore(marking: true) }
    }

    /// Runs `body` under the store's own lock (any gate of this user, whatever state folder its vaultctl has),
    /// for a verb whose row says it changes the slots.
    func underSlotsLock<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        guard rule.takesSlotsLock else { throw Self.fault("changes the device slots without its row saying so") }
        let lock = try FileLock(path: "\(store.folder)/.slots.lock", waitingAtMost: 10)
        defer { lock.release() }
        return try body()
    }

    /// A verb doing what its row does not allow: a fault of the gate's own, refused (69) rather than done.
    static func fault(_ what: String) -> VaultError {
        .slot(.gateUnavailable("a request of vaultctl-gate \(what) (a fault of vaultctl-gate; report it)"))
    }

    /// A fresh authentication that opens `scope`, counted by the rate limit; its line (ok or why not) goes to
    /// the log before anything it opens is used, and one that cannot be written opens nothing. Only for a
    /// verb whose row says it asks.
    func authenticate(_ scope: GateScope, reason: String) throws(VaultError) {
        guard rule.asks, let command = rule.audit else { throw Self.fault("asks for a password without its row saying so") }
        let (relay, limiter, seconds) = (self.relay, try self.limiter, Double(try policy.askpassSeconds))
        let remoteHost = try judgedOrigin.pamRemoteHost
        // At the bound the gate ends (75), saying nothing: vaultctl, which waits for it, says why.
        let bound = try policy.authenticationSeconds
        // The place counts if the gate ends before giving it back, from the start (see countsIfInterrupted); at
        // the bound with nothing guessed, it is taken back first.
        let asking = Authentication(relay: relay, user: user, remoteHost: { remoteHost },
                                    deadline: { (bound, nil, { try? limiter.markAsking() }) },
                                    placeWait: { seconds }, say: { relay.show($0, isError: false) },
                                    limiter: { () throws(VaultError) -> RateLimiter in limiter }, started: transaction)
        var gate = asking.gate(asking: makeGate(asking))
        let shown = scope.prompt(reason)
        var single: SlotName?
        if case .slots(let names) = scope, names.count == 1 { single = names[0] }
        let slot = single
        // The verdict's line is written before the verdict is given (or the place given back): a line that
        // cannot be written withholds the verdict, so a full disk or a file size limit is no oracle for
        // guesses, and the attempt's place stays to be counted.
        let (audit, clock, origin) = (self.audit, self.clock, try self.origin)
        gate.countsIfInterrupted = true
        gate.recordVerdict = { (failure: VaultError?) throws(VaultError) in
            // Nothing answered (cancelled, no way to ask): no guess, no line, so a program that asks and
            // cancels again and again cannot push the log's older lines out.
            if case .notAuthenticated? = failure { return }
            let result = (AuditResult(authentication: failure) ?? .error).rawValue
            let why = failure.map { "\(shown): \(VaultError.reason($0))" } ?? shown
            try audit.append(AuditEntry(time: TimeText.iso8601(clock.now()), command: failure == nil ? "authenticate" : command,
                                        slot: slot?.rawValue, origin: origin, result: result, reason: why))
        }
        // A refusal before any prompt (blocked, every place taken) writes no line: the failures that led to
        // it have theirs, and a program asking again and again while blocked cannot fill the log.
        try gate.verify(reason: shown)
        authenticatedOnce = true
        switch scope {
        case .none: break
        case .everySlot: grantedEverySlot = true
        case .slots(let names):
            granted.formUnion(names)
            readOnce.subtract(names)
        }
    }

    /// What an authentication needs, made ready ahead of it (see `expectsAuthentication`).
    func makeReadyToAuthenticate() {
        // libpam loaded, the stack read and its modules loaded (their libraries' constructors run, none of
        // their functions): most of what starting PAM costs, done while vaultctl makes its request.
        transaction = PAMGate.Transaction.start(user: user)
        _ = try? judgedOrigin  // the evidence, then the policy (its ranges); both are kept for the exchange
    }

    /// Where the session comes from, judged once per exchange on first need: from the evidence prepared at the
    /// gate's start, if it was, by the effective policy's ranges.
    private lazy var origins = OriginOnce(evidence: { [prepared] in prepared?.value() ?? SystemOriginProbe().gather() })
    var judgedOrigin: Origin {
        get throws(VaultError) { try origins.origin { () throws(VaultError) -> Policy in try policy } }
    }

    var origin: String { get throws(VaultError) { try judgedOrigin.description } }

    /// Appends a line under the verb's command word, or throws (for lines that must be there before a value
    /// leaves).
    func append(_ name: SlotName?, _ result: String, reason: String? = nil) throws(VaultError) {
        guard let command = rule.audit else { throw Self.fault("writes an audit line without its row naming its command") }
        do {
            try audit.append(AuditEntry(time: TimeText.iso8601(clock.now()), command: command, slot: name?.rawValue,
                                        origin: try origin, result: result, reason: reason))
        } catch { throw .auditUnwritable }
    }

    /// Appends a line as best it can (after the fact: the log's check before the prompt passed).
    func log(_ name: SlotName?, _ result: String, reason: String? = nil) {
        try? append(name, result, reason: reason)
    }

    /// An answer of protocol text (a look, names, a log): no secret, so no zeroizing buffer.
    static func text(_ s: String) -> GatePayload { .plain(Array(s.utf8)) }

}
