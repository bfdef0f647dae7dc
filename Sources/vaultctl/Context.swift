#if canImport(Glibc)
import Glibc
#endif
import SecretService
import GateProtocol
import Slots
import VaultRules
import Vault

/// What a command runs against, built lazily from the environment so that `help` and usage errors touch
/// no files, no bus and no PAM, and `status` never builds a password source.
final class Context {
    let locations = Locations.fromEnvironment()
    /// `--password-stdin`: PAM's questions are answered from standard input instead of VAULT_ASKPASS or
    /// the terminal.
    let passwordFromStandardInput: Bool
    let clock: any Clock = SystemClock()
    /// The slot a command worked on when it is not its first argument (`credential get`), for the audit line.
    var auditedSlot: SlotName?
    /// Slots a command worked on, each with its own result word (`credential erase`: "erased" or "kept"):
    /// a successful command leaves one audit line for each instead of one line.
    var auditedSlots: [(SlotName, String)] = []
    /// The result word of a successful command's line when it is not "ok" ("kept": nothing was changed).
    var auditedResult: String?
    /// What a command that works on no slot worked on (`target add`: "target 'NAME'"), for the reason field
    /// of its audit line when it succeeds (a failure's line has the error there, which names it too).
    var auditedSubject: String?
    private var builtVault: Vault?
    private var builtProtection: Protection?
    private var builtPolicy: Policy?
    /// Where this command's session comes from: judged once, for its audit lines, `unlock` and PAM alike.
    private let origins = OriginOnce()

    /// Writes the command's audit line right before a secret leaves (stdout, or COMMAND's stdin), with
    /// the result given ("ok", "handed-over"); throws when the line cannot be written, so nothing leaves.
    /// Set by `Entrypoint` for audited commands.
    var auditBeforeDisclosure: (_ result: String) throws(CommandFailure) -> Void = { _ in }
    /// The result that `auditBeforeDisclosure` wrote, once it did.
    var disclosedResult: String?
    /// Why the line before a disclosure could not be written, for the command to report.
    var auditFailure: CommandFailure?

    init(passwordFromStandardInput: Bool = false) {
        self.passwordFromStandardInput = passwordFromStandardInput
    }

    /// Runs `auditBeforeDisclosure`.
    func recordDisclosure(_ result: String) throws(CommandFailure) {
        do { try auditBeforeDisclosure(result) } catch {
            auditFailure = error
            throw error
        }
    }

    /// `recordDisclosure` inside the vault's own flow (supply, askpass): the failure is kept in
    /// `auditFailure` for the command to report, and the vault sees `auditUnwritable`.
    func recordDisclosureInVault(_ result: String) throws(VaultError) {
        do { try recordDisclosure(result) } catch { throw .auditUnwritable }
    }

    /// The policy in effect: the user's own (a file that does not parse is an error, whatever the vault, said
    /// before the gate is started), and for a vault behind the gate root's tightened by it, as the gate reads
    /// it, so that what this side judges (supply's default, the origin's ranges) is what root allows. The
    /// user's file is read once for both.
    func policy() throws(CommandFailure) -> Policy {
        if let builtPolicy { return builtPolicy }
        let reading = PolicyReading(configFolder: locations.config)
        var p: Policy
        do throws(VaultError) { p = try reading.strict() } catch { throw ErrorReport.failure(error) }
        if case .gate = try protection() {
            // The user's file was read without a problem (strict), so it tightens root's here as in the gate.
            do throws(VaultError) { p = try reading.effective() } catch { throw ErrorReport.failure(error) }
        }
        builtPolicy = p
        return p
    }

    func limiter() throws(CommandFailure) -> RateLimiter {
        RateLimiter.audited(folder: locations.state, policy: try policy().rateLimit, clock: clock)
    }

    /// Where failures that are not PAM's are counted: the gate's rate limit when the vault is protected.
    func failureCount() throws(CommandFailure) -> any FailureCount {
        if let client = try gateClient() { return GateFailureCount(client: client) }
        return try limiter()
    }

    func supplyState() throws(CommandFailure) -> SupplyState {
        SupplyState(stateFolder: locations.state, allowByDefault: try policy().allowSupplyByDefault)
    }

    var audit: AuditLog { AuditLog(folder: locations.state) }
    var vaultLock: VaultLock { VaultLock(folder: locations.state) }
    var keyringLockRecord: KeyringLockRecord { KeyringLockRecord(folder: locations.state) }

    /// Where this session comes from, judged by the policy's ranges.
    func origin() throws(CommandFailure) -> Origin {
        let p = try policy()
        do throws(VaultError) { return try origins.origin { () throws(VaultError) -> Policy in p } } catch { throw ErrorReport.failure(error) }
    }

    var passwordSource: PasswordSource {
        passwordFromStandardInput ? PasswordSource.standardInput : PasswordSource.fromEnvironment()
    }

    /// How long the gate may take over a request that can ask a person: longer than the gate's own bound, so
    /// that the gate ends first (giving back an attempt that guessed nothing): a place may take an askpass bound
    /// to come free, then the whole authentication's bound, as root's policy tightened by the user's sets them.
    /// Read once, when the gate's client first needs it (never for a command that does not ask).
    private lazy var gatePromptSeconds: Double = {
        let p = PolicyReading(configFolder: locations.config).effectiveForPrompt()
        return Double(p.askpassSeconds + p.authenticationSeconds) + 15
    }()

    /// The installed gate, started by `startGateEarly`.
    private var earlyGate: GateClient?

    /// Whether `startGateEarly` started an installed gate.
    var gateStartedEarly: Bool { earlyGate != nil }

    /// Starts the installed `vaultctl-gate` without waiting for it, for a command that will look at the vault:
    /// its start-up (most of a protected command's time) overlaps the command's own. `protection()` takes it.
    /// `authenticating`: the command may ask for a password (the gate makes ready for it meanwhile).
    /// `launched`: the gate the command started before its words were parsed (`GateClient.launchInstalled`).
    func startGateEarly(authenticating: Bool, launched: GateClient.Launched? = nil) {
        guard builtProtection == nil, earlyGate == nil, let path = launched?.path ?? GateClient.installedPath() else { return }
        let client = GateClient(path: path, source: passwordSource, promptSeconds: { [unowned self] in self.gatePromptSeconds })
        client.startEarly(authenticating: authenticating, launched: launched)
        earlyGate = client
    }

    /// Which boundary guards the device slot (starting `vaultctl-gate` when one is installed).
    /// `helloAtFirstRequest`: the command's first request follows at once and it calls `confirmGate()` before
    /// it uses any answer (`Protection.find`); only for the first call, which decides.
    func protection(helloAtFirstRequest: Bool = false) throws(CommandFailure) -> Protection {
        if let builtProtection { return builtProtection }
        do {
            let p = try Protection.find(state: locations.state, source: passwordSource, promptSeconds: { [unowned self] in self.gatePromptSeconds },
                                        started: earlyGate, helloAtFirstRequest: helloAtFirstRequest)
            builtProtection = p
            return p
        } catch {
            throw Self.gateFailure(error)
        }
    }

    /// That the gate of a protected vault started and said its hello, for a command whose `protection` did
    /// not wait for it: the same error (69) as when it did. Waits for the hello if no request has yet.
    func confirmGate() throws(CommandFailure) {
        guard case .gate(let client) = try protection() else { return }
        do throws(VaultError) { _ = try client.start() } catch { throw Self.gateFailure(error) }
    }

    /// Why the installed gate cannot guard the vault, in the command's words.
    private static func gateFailure(_ error: VaultError) -> CommandFailure {
        // An installed gate binds the device slot to the machine id at its start: a machine without one
        // is said as such, with how to make one.
        guard MachineSetup.hasMachineID else { return MachineSetup.noMachineID }
        var failure = ErrorReport.failure(error)
        if case .slot(.gateUnavailable) = error, let path = GateClient.installedPath(),
           let remedy = MachineSetup.gateModeRemedy(path: path) {
            failure = CommandFailure(code: failure.code, message: "\(failure.message) \(remedy)", result: failure.result)
        }
        return failure
    }

    /// The gate's client when the vault is protected.
    func gateClient() throws(CommandFailure) -> GateClient? {
        if case .gate(let client) = try protection() { return client }
        return nil
    }

    /// Whether the vault is locked: the gate's marker when protected, else the state folder's.
    func isVaultLocked() throws(CommandFailure) -> Bool {
        let client = try gateClient()
        do throws(VaultError) {
            // The gate's hello said (and every gated request checks it again in the gate).
            if let client {
                _ = try client.start()  // its hello says it (a command that left the hello to its first request)
                return client.lockedAtStart
            }
            return try vaultLock.isLocked()
        } catch {
            throw ErrorReport.failure(error)
        }
    }

    /// `helloAtFirstRequest`: as `protection`'s, for the first call.
    func vault(helloAtFirstRequest: Bool = false) throws(CommandFailure) -> Vault {
        if let builtVault { return builtVault }
        if case .gate(let client) = try protection(helloAtFirstRequest: helloAtFirstRequest) {
            // Protected: the gate authenticates (and rate-limits, and logs), and alone reaches the device slot.
            let config = locations.config
            let v = Vault(device: GateSlot(client: client), sync: SecretServiceSlot(), record: ModeRecord(folder: config),
                          gate: GatePresence(client: client), changeLock: "\(locations.state)/.changes.lock",
                          changeGates: { () throws(VaultError) in try PolicyReading(configFolder: config).effective().gates })
            builtVault = v
            return v
        }
        // Unprotected: the device slot is bound here (the gate binds its own), and PAM runs in this process.
        let machine = try MachineSetup.identity()
        guard let user = PAMGate.invokingUser() else {
            throw CommandFailure(code: .config, message: "Your user id has no entry in the user database, so PAM cannot authenticate you.")
        }
        let (state, config, clock) = (locations.state, locations.config, clock)
        // A gate is installed and runs, and this vault's device key is in the state folder (from before the gate,
        // or put there by another program running as you, with slot files beside it): its values are read,
        // moved and removed as before, but no value is written there, a replacement included (a value written
        // is a new secret, under a key such a program may hold), without the person moving the vault in first.
        var beforeDeviceWrite: (@Sendable (SlotName) throws(VaultError) -> Void)?
        if case .none(nil, _) = try protection() {
            // No gate beside this vaultctl: a first device-slot value makes a vault in the state folder, for
            // good (until `device-key protect`); said once, after the write made it (`Entrypoint`), never silently.
            beforeDeviceWrite = { (_) throws(VaultError) in NewVaultNotice.expect(state: state) }
        }
        if case .none(_?, _?) = try protection() {
            beforeDeviceWrite = { (name) throws(VaultError) in
                throw .refused("slot '\(name)' would be written to your state folder (\(state)), where any program running as you can read it: vaultctl-gate is installed, and this vault's device key is there (from before the gate, or put there by another program). Run 'vaultctl device-key protect' to move the vault behind the gate first, or keep it in the sync slot ('--mode sync', '--to sync')")
            }
        }
        // Judged when PAM starts, by the policy's ranges (the built-in ones if it cannot be read: the rate
        // limit refuses such a policy before PAM runs).
        let origins = self.origins
        // The policy is read only when a prompt is about to happen: a malformed policy.json must not stop
        // status, list, store or delete. A fourth parallel prompt waits for a place (as long as an askpass
        // program may take to answer).
        let gate = Authentication(relay: passwordSource, user: user, remoteHost: {
            // The command's one judgement (by the policy's ranges, or the built-in ones if it cannot be read).
            (try? origins.origin { () throws(VaultError) -> Policy in PolicyReading(configFolder: config).forPrompt() })?.pamRemoteHost
        }, deadline: {
            let seconds = PolicyReading(configFolder: config).forPrompt().authenticationSeconds
            return (seconds, PAMGate.deadlineMessage(seconds), nil)
        }, placeWait: {
            Double(PolicyReading(configFolder: config).forPrompt().askpassSeconds)
        }, say: { Output.message($0) }, limiter: { () throws(VaultError) -> RateLimiter in
            RateLimiter.audited(folder: state, policy: try PolicyReading(configFolder: config).strict().rateLimit, clock: clock)
        }).rateLimitedPAM
        let v = Vault(device: SealedFileSlot(folder: locations.state, machine: machine, tpm: TPMChoice.fromEnvironment()),
                      sync: SecretServiceSlot(),
                      record: ModeRecord(folder: locations.config),
                      gate: gate,
                      changeLock: "\(locations.state)/.changes.lock",
                      changeGates: { () throws(VaultError) in try PolicyReading(configFolder: config).strict().gates },
                      beforeChange: { () throws(VaultError) in
                          // `device-key protect` leaves this marker first: from then on the state folder's
                          // vault takes no change, so none is left behind when it is moved.
                          if access("\(state)/\(Protection.markerName)", F_OK) == 0 {
                              throw .refused("this vault is being moved behind vaultctl-gate, or a move was interrupted; run 'vaultctl device-key protect' (again) to finish it, then this command")
                          }
                      },
                      beforeDeviceWrite: beforeDeviceWrite)
        builtVault = v
        return v
    }

    func copiedMark() -> CopiedMark {
        CopiedMark(folder: locations.config)
    }

    func slotName(_ raw: String) throws(CommandFailure) -> SlotName {
        guard let name = SlotName(raw) else {
            throw .usage("\(Quote.text(raw)) is not a valid slot name: \(SlotName.rule).")
        }
        return name
    }
}
