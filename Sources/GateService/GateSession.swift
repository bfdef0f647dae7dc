#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// One exchange with the CLI (one command of it): a `hello`, then requests, each answered `ok` or
/// `refused`, until the CLI closes its end. Every gated request does, in this order: the vault lock, the
/// audit log's check, the rate limit (a place taken), PAM as the real user with its questions relayed to
/// the CLI, the audit line, the device slot's work, the reply.
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
    var limiter: RateLimiter { get throws(VaultError) { RateLimiter(stateFolder: store.folder, policy: try policy.rateLimit, clock: clock) } }

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
                reply = GateFrame(.ok, body: try handle(request, value: value))
            } catch {
                reply = GateFrame(.refused, text: GateRefusal.encode(error))
            }
            if relay.broken || !reply.write(to: output) { return 74 }
        }
    }

    func handle(_ request: GateRequest, value given: SecretBytes?) throws(VaultError) -> GatePayload {
        switch request {
        case .holding(let name):
            guard try store.exists() else { return Self.text("empty") }
            let seen = slot.look(name)
            switch seen.holding {
            case .empty: return Self.text("empty")
            case .unknown(let e): throw .slot(e)
            case .holds:
                let h = GateHolding(binding: seen.binding ?? DeviceKeyBinding.machineID.rawValue, tag: seen.tag ?? [])
                return Self.text(GateHolding.text(h))
            }
        case .names:
            guard try store.exists() else { return Self.text("") }
            do { return Self.text(try slot.names().map(\.rawValue).joined(separator: "\n")) } catch { throw .slot(error) }
        case .lock:
            try ensureStore(marking: true)
            if try vaultLock.isLocked() { return Self.text("") }  // locked already: nothing changes, no line
            try vaultLock.lock(time: clock.now(), origin: try origin)
            log("lock", nil, "ok")
            return Self.text("")
        case .unlock:
            guard try vaultLock.isLocked() else { return Self.text("") }
            // Judged here, from what the gate sees (its parents, the terminal's utmp record; no variable of
            // the caller's): a program running as you cannot make a remote session look nearby.
            let origin = try judgedOrigin
            guard origin.verdict == .nearby else {
                log("unlock", nil, "refused", reason: "remote origin (\(origin.description))")
                throw .refused("unlocking needs a session on this machine or the local network, and this one is remote (\(origin.description))")
            }
            try checkBeforePrompt()
            try authenticate(.none, reason: "unlock the vault", command: "unlock")
            try vaultLock.unlock()
            log("unlock", nil, "ok")
            return Self.text("")
        case .authenticate(let scope, let reason):
            try admit()
            try authenticate(scope, reason: reason, command: "authenticate")
            return Self.text("")
        case .read(let name):
            try admit()
            try requireHeld(name)
            // A grant opens one read of the slot: a second read in this exchange asks again, so a program that
            // holds an exchange open cannot go on reading (a value stored later too) on one finger.
            if !isGranted(name) || readOnce.contains(name) {
                try authenticate(.slots([name]), reason: "read slot '\(name)'", command: "read")
            }
            let value: SecretBytes
            do { value = try slot.read(name) } catch {
                log("read", name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            // The line is in the log before the value leaves; one that cannot be written stops it.
            try append("read", name, "ok")
            readOnce.insert(name)
            return .secret(value)
        case .store(let name):
            try admit()
            guard let value = given else { throw .badInput("vaultctl-gate got no value after the store request") }
            try ensureStore(marking: true)
            let replaces: Bool
            switch slot.holding(name) {
            case .empty: replaces = false
            case .holds, .unknown: replaces = true  // a file that cannot open here is replaced only after PAM too
            }
            let storeOverAsks = try policy.gates.storeOver
            if replaces && !isGranted(name) && storeOverAsks {
                try authenticate(.slots([name]), reason: "replace the value in slot '\(name)'", command: "store")
            }
            // Looked at again under the store's own lock (any gate of this user, whatever state folder its
            // vaultctl has): a value stored meanwhile is replaced only after a password.
            let lock = try FileLock(path: "\(store.folder)/.slots.lock", waitingAtMost: 10)
            defer { lock.release() }
            if !replaces, slot.holding(name) != .empty, !isGranted(name), storeOverAsks {
                throw .changedMeanwhile(name)
            }
            if !replaces { try checkRoomForNewSlot() }
            do { try slot.write(name, value) } catch {
                log("store", name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log("store", name, replaces ? "replaced" : "ok")
            return Self.text("")
        case .log(let limit, let skip):
            guard try store.exists() else { return Self.text("") }
            let entries = try audit.entries(limit: limit, skip: skip)
            // The newest lines that fit one answer.
            var lines: [String] = []
            var size = 0
            for entry in entries.reversed() {
                let line = entry.jsonLine
                if size + line.utf8.count + 1 > GateWord.ok.maximumPayload { break }
                lines.append(line)
                size += line.utf8.count + 1
            }
            return Self.text(lines.reversed().joined(separator: "\n"))
        case .sealDeviceKey:
            // No vault yet: its first store makes the key, sealed by the gate's TPM.
            guard try store.exists() else {
                guard tpm != nil else { throw .slot(.gateHasNoTPM) }
                return Self.text("nothing")
            }
            let before: SealedFileSlot.KeyState
            do { before = try slot.keyState() } catch { throw .slot(error) }
            if before.binding == .tpm2 && !before.machineIDKey { return Self.text("already") }  // nothing to do, nothing asked
            guard authenticatedOnce else { throw .notAuthenticated("sealing the device key needs an authentication first") }
            try admit()
            guard tpm != nil else {
                throw .slot(.gateHasNoTPM)
            }
            let lock = try FileLock(path: "\(store.folder)/.slots.lock", waitingAtMost: 10)
            defer { lock.release() }
            let outcome: SealedFileSlot.RekeyOutcome
            do { outcome = try slot.rekeyUnderTPM() } catch {
                log("seal", nil, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log("seal", nil, "ok")
            return Self.text("\(outcome.resealed) \(outcome.createdKey ? 1 : 0) \(outcome.removedOldKey ? 1 : 0)")
        case .recordFailure:
            try ensureStore(marking: false)
            // A line only while a failure can still count (not while blocked): a program asking again and
            // again cannot fill the log this way either.
            let counts = try limiter.blockedUntil() == nil
            let until = try limiter.recordFailure()
            if counts { log("failure", nil, "failed", reason: "a program given a secret did not accept it") }
            return Self.text(until.map { "\($0)" } ?? "")
        case .deviceKey:
            var binding = "none"
            if try store.exists() {
                do { binding = try slot.keyState().binding?.rawValue ?? "none" } catch { throw .slot(error) }
            }
            return Self.text("\(binding)\t\(tpm?.tcti ?? "none")")
        case .importValue(let name):
            // Only after an authentication for every slot in this exchange: `device-key protect` asks first.
            guard grantedEverySlot else { throw .notAuthenticated("moving a value in needs an authentication for every slot first") }
            try admit()
            guard let value = given else { throw .badInput("vaultctl-gate got no value after the import request") }
            let lock = try FileLock(path: "\(store.folder)/.slots.lock", waitingAtMost: 10)
            defer { lock.release() }
            if slot.holding(name) == .empty { try checkRoomForNewSlot() }
            do { try slot.write(name, value) } catch {
                log("import", name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log("import", name, "ok")
            return Self.text("")
        case .finishImport:
            guard grantedEverySlot else { throw .notAuthenticated("protecting the vault needs an authentication for every slot first") }
            try ensureStore(marking: true)
            log("protect", nil, "ok")
            return Self.text("")
        case .delete(let name):
            try admit()
            try requireHeld(name)
            let deleteAsks = try policy.gates.delete
            if !isGranted(name) && deleteAsks {
                try authenticate(.slots([name]), reason: "delete slot '\(name)'", command: "delete")
            }
            let lock = try FileLock(path: "\(store.folder)/.slots.lock", waitingAtMost: 10)
            defer { lock.release() }
            let removed: Bool
            do { removed = try slot.delete(name) } catch {
                log("delete", name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            // Removed by another command while this one asked: nothing was deleted here, and it says so.
            guard removed else { throw .slot(.empty(name)) }
            log("delete", name, "ok")
            return Self.text("")
        }
    }

    /// The most slots, and bytes in slot files, one user's folder of the store holds: the store is on the
    /// system's disk (`/var/lib`), and a program running as the user could otherwise fill it with stores that
    /// need no password. 4,096 values of at most 64 KiB each, and 64 MiB in all.
    static let maximumSlots = 4096
    static let maximumSlotBytes = 64 * 1024 * 1024

    /// Refuses (77) a new slot past either bound; called under the slots' lock.
    func checkRoomForNewSlot() throws(VaultError) {
        let folder = "\(store.folder)/slots"
        let files: [String]
        do { files = try SecureFile.privateFolderExists(folder) ? try SecureFile.entries(of: folder) : [] } catch { throw .slot(error) }
        guard files.count < Self.maximumSlots else {
            throw .refused("your protected vault holds \(files.count) slots, the most vaultctl-gate keeps for one user (the store is on the system's disk); delete some first")
        }
        var bytes = 0
        var st = stat()
        for file in files where lstat("\(folder)/\(file)", &st) == 0 { bytes += Int(st.st_size) }
        guard bytes < Self.maximumSlotBytes else {
            throw .refused("your protected vault's slots take \(bytes / 1024 / 1024) MiB, the most vaultctl-gate keeps for one user (the store is on the system's disk); delete some first")
        }
    }

    /// Throws `empty` when the slot holds nothing (nothing to read or remove asks nothing), or the slot's
    /// error when it cannot be looked at.
    func requireHeld(_ name: SlotName) throws(VaultError) {
        guard try store.exists() else { throw .slot(.empty(name)) }
        switch slot.holding(name) {
        case .empty: throw .slot(.empty(name))
        case .unknown(let e): throw .slot(e)
        case .holds: return
        }
    }

    /// This user's folder is this account's (`GateAccount`): a folder from before the binding is bound now.
    func checkAccount() throws(VaultError) {
        guard try store.exists() else { return }  // a new vault: bound when its folder is made
        switch try account.standing() {
        case .bound(let id):
            boundID = id
        case .unbound:
            try account.checkMayBind()
            let id = try homeID()
            try account.writeRecord(id: id)
            boundID = id
        }
    }

    /// The account id of this exchange's folder, once its record was seen to name this account (or was
    /// written): until then nothing goes into the folder.
    private var boundID: String?

    /// Makes this user's folder when there is none, bound to this account, and (`marking`) protected. The record
    /// is the first thing in a new folder: one that cannot be written takes the folder away again, so no
    /// secret ever lies in a folder that a later account with this uid could take as its own.
    func ensureStore(marking: Bool) throws(VaultError) {
        if boundID == nil {
            var id = try homeID()
            let made = try !store.exists()
            try store.ensure(marking: false)
            do throws(VaultError) {
                var needsRecord = made
                if !made {
                    switch try account.standing() {
                    case .bound(let recorded): id = recorded  // made meanwhile by another gate of this account
                    case .unbound:
                        try account.checkMayBind()
                        needsRecord = true
                    }
                }
                if needsRecord { try account.writeRecord(id: id) }
            } catch {
                if made { rmdir(store.folder) }  // empty: a write that fails removes its temporary file
                throw error
            }
            boundID = id
        }
        try store.ensure(marking: marking)
    }

    /// This account's id in its home: the one there, or a new one put there. Written exclusively (a link, never
    /// a replace), so two gates that bind at once agree on the id the first one wrote. Written as the user, with
    /// the gate's group dropped: a home is the user's to shape, and nothing the group alone may reach is
    /// written there.
    func homeID() throws(VaultError) -> String {
        if let id = account.homeID() { return id }
        // The group drop is the whole process's (glibc applies it to every thread): the prepared work first.
        _ = prepared?.value()
        try GroupDrop.asUser("write in your home") { () throws(VaultError) in try account.bindHome(id: GateAccount.newID()) }
        guard let id = account.homeID() else {
            throw .slot(.gateUnavailable("your account's id is not readable in your home (\(account.homeFile)) right after it was written"))
        }
        return id
    }

    /// Before any gated request: the vault lock, then what every prompt needs.
    func admit() throws(VaultError) {
        if try vaultLock.isLocked() { throw .vaultLocked }
        try checkBeforePrompt()
    }

    /// The audit log must take a line (fail closed: no line, no secret), and the rate limit must not block.
    func checkBeforePrompt() throws(VaultError) {
        try ensureStore(marking: false)
        try audit.checkWritable()
        try limiter.check()
    }

    /// A fresh authentication that opens `scope`, counted by the rate limit; its line (ok or why not) goes to
    /// the log before anything it opens is used, and one that cannot be written opens nothing.
    func authenticate(_ scope: GateScope, reason: String, command: String) throws(VaultError) {
        let (relay, limiter, seconds) = (self.relay, try self.limiter, Double(try policy.askpassSeconds))
        let remoteHost = try judgedOrigin.pamRemoteHost
        // At the bound the gate ends (75), saying nothing: vaultctl, which waits for it, says why.
        let bound = try policy.authenticationSeconds
        // The place counts if the gate ends before giving it back, from the start (see countsIfInterrupted); at
        // the bound with nothing guessed, it is taken back first.
        var gate = RateLimitedGate(PAMGate(source: relay, user: user, remoteHost: { remoteHost },
                                           deadline: { (bound, nil, { try? limiter.markAsking() }) },
                                           started: transaction),
                                   placeWait: { seconds }, waiting: { s in
            relay.show("other vaultctl commands are asking for your password; waiting for one to finish (at most \(s) s).", isError: false)
        }) { () throws(VaultError) -> RateLimiter in limiter }
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
            let result: String
            switch failure {
            case nil: result = "ok"
            case .authenticationFailed?: result = "failed"
            default: result = "error"
            }
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

    /// Where the session comes from, judged once per exchange (it walks /proc and utmp) on first need.
    private var judged: Origin?
    var judgedOrigin: Origin {
        get throws(VaultError) {
            if let judged { return judged }
            let evidence = prepared?.value() ?? SystemOriginProbe().gather()
            let p = try policy
            let o = OriginJudge.judge(evidence, remoteRanges: p.remoteRanges, nearbyRanges: p.nearbyRanges)
            judged = o
            return o
        }
    }

    var origin: String { get throws(VaultError) { try judgedOrigin.description } }

    /// Appends a line, or throws (for lines that must be there before a value leaves).
    func append(_ command: String, _ name: SlotName?, _ result: String, reason: String? = nil) throws(VaultError) {
        do {
            try audit.append(AuditEntry(time: TimeText.iso8601(clock.now()), command: command, slot: name?.rawValue,
                                        origin: try origin, result: result, reason: reason))
        } catch { throw .auditUnwritable }
    }

    /// Appends a line as best it can (after the fact: the log's check before the prompt passed).
    func log(_ command: String, _ name: SlotName?, _ result: String, reason: String? = nil) {
        try? append(command, name, result, reason: reason)
    }

    /// An answer of protocol text (a look, names, a log): no secret, so no zeroizing buffer.
    static func text(_ s: String) -> GatePayload { .plain(Array(s.utf8)) }

}
