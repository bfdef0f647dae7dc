#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import CSystem

/// The CLI's side of the gate protocol: starts `vaultctl-gate` once per command (as early as the command
/// knows it will need it, or at the first request),
/// sends requests, relays PAM's questions to the person through the CLI's own password source (the
/// terminal, `VAULT_ASKPASS`, `--password-stdin`) and PAM's messages to standard error, and returns each
/// request's result or throws its refusal. The exchange ends when the CLI exits (the gate reads the end of
/// its input).
///
/// `@unchecked Sendable`: a `Slot` must be `Sendable`, and `GateSlot` holds this client; its state (the
/// pipes, whether it started) is used by the one thread that runs the command, never by two at once.
public final class GateClient: @unchecked Sendable {
    public let path: String
    let source: PasswordSource
    /// How long one frame may take when a person may be asked (PAM's own delays and a person's answer),
    /// asked of the caller when it is needed (`startEarly` asks for a command that asks as a rule, while the
    /// gate loads); the caller reads the policies once (Context), and a command that never asks (status,
    /// list) never reads them for it.
    var promptSeconds: Double { promptBound() }
    private let promptBound: () -> Double
    /// How long one frame may take when nobody is asked (the gate reads a few files).
    static let quickSeconds = 10.0

    private var toGate: Int32 = -1
    private var reader: GateFrameReader?
    private var started: Result<Bool, VaultError>?
    /// Whether the vault was locked when the gate started (its hello).
    public private(set) var lockedAtStart = false
    /// The last `holding` answer, for `GateSlot.binding(of:)` right after a look; cleared by every other request.
    var lastLook: (name: SlotName, answer: Result<GateHolding?, SlotError>)?

    public init(path: String, source: PasswordSource, promptSeconds: @escaping () -> Double) {
        self.path = path
        self.source = source
        self.promptBound = promptSeconds
    }

    /// Where the gate is for the vaultctl that runs: `../libexec/vaultctl/vaultctl-gate` from the folder of
    /// its own binary (as `make install` puts them); nil when there is none there.
    public static func installedPath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard vaultctl_installed_gate_path(&buffer) != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts the gate (once) and reads its hello: whether this user's vault is protected already. Throws
    /// the gate's own refusal (`gateUnavailable`, 69: not set-group-ID, no store) or why it could not start.
    public func start() throws(VaultError) -> Bool {
        if let started { return try started.get() }
        let result = spawn().flatMap { _ in readHello() }
        started = result
        return try result.get()
    }

    /// Starts the gate's process without waiting for its hello, so that it loads while the command does its
    /// own first work (the gate's start-up is most of a protected command's time); `start()` reads the hello
    /// later. Does nothing when it was started already. `authenticating`: the command may ask for a password,
    /// so the gate makes ready for it (libpam, the policy, the origin) while it waits for the first request.
    /// `launched`: a process `launch` started for this path earlier still (before the words were parsed).
    public func startEarly(authenticating: Bool = false, launched: Launched? = nil) {
        guard started == nil, spawned == nil else { return }
        let process = launched.flatMap { $0.path == path ? $0.process : nil } ?? Self.launch(path, authenticating: authenticating)
        spawned = adopt(process)
        if authenticating { _ = promptSeconds }
    }

    private var spawned: Result<Void, VaultError>?
    private var gatePID: pid_t = 0

    /// The gate's exit status once it has ended (within `seconds`), or nil.
    private func exitStatus(within seconds: Double) -> Int32? {
        guard gatePID > 0 else { return nil }
        let deadline = Deadline(secondsFromNow: seconds)
        var status: Int32 = 0
        repeat {
            if waitpid(gatePID, &status, WNOHANG) == gatePID {
                gatePID = 0
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
            }
            usleep(5000)
        } while deadline.remainingMilliseconds > 0
        return nil
    }

    private func spawn() -> Result<Void, VaultError> {
        if let spawned { return spawned }
        let result = adopt(Self.launch(path))
        spawned = result
        return result
    }

    /// A started gate: vaultctl's ends of its pipes, and its process id. Not `Sendable`: the descriptors
    /// belong to the one thread that runs the command.
    public struct Process {
        let toGate: Int32
        let fromGate: Int32
        let pid: pid_t
    }

    /// A gate started before its client was made (`launchInstalled`), for `startEarly` to take. Not
    /// `Sendable`, as `Process` is not.
    public struct Launched {
        public let path: String
        let process: Result<Process, VaultError>
    }

    /// Starts the installed gate (`installedPath`), if there is one, before anything else is known: its
    /// start-up then overlaps the parsing of the command's words and the making of its context.
    public static func launchInstalled(authenticating: Bool) -> Launched? {
        guard let path = installedPath() else { return nil }
        return Launched(path: path, process: launch(path, authenticating: authenticating))
    }

    /// The gate vaultctl's constructor started before main (`vaultctl_gate_spawn` from C, as `launch`), for
    /// `startEarly` to take.
    public static func launched(path: String, _ start: vaultctl_gate_start) -> Launched {
        Launched(path: path, process: process(path, start))
    }

    private func adopt(_ process: Result<Process, VaultError>) -> Result<Void, VaultError> {
        process.map { p in
            toGate = p.toGate
            reader = GateFrameReader(fd: p.fromGate)
            gatePID = p.pid
        }
    }

    /// Starts the gate as `GateLaunch` says (the C side gives it `gatePATH`, `gateVariables` and, when
    /// `authenticating`, `authenticatingHint`).
    private static func launch(_ path: String, authenticating: Bool = false) -> Result<Process, VaultError> {
        process(path, path.withCString { vaultctl_gate_spawn($0, authenticating ? 1 : 0) })
    }

    private static func process(_ path: String, _ start: vaultctl_gate_start) -> Result<Process, VaultError> {
        switch Int(start.failed) {
        case Int(VAULTCTL_GATE_STARTED):
            return .success(Process(toGate: start.to_gate, fromGate: start.from_gate, pid: start.pid))
        case Int(VAULTCTL_GATE_NO_PIPE):
            return .failure(.slot(.gateUnavailable("no pipe to talk to it (\(String(cString: strerror(start.error))))")))
        default:
            return .failure(.slot(.gateUnavailable("\(path) could not be started (\(String(cString: strerror(start.error))))")))
        }
    }

    private func readHello() -> Result<Bool, VaultError> {
        guard let reader else { return .failure(.slot(.gateUnavailable("it is not running"))) }
        switch reader.next(within: Self.quickSeconds) {
        case .success(let f) where f.word == .hello:
            // Only the gate as the kernel started it, set-group-ID, is believed (GateIdentity).
            if let why = GateIdentity.notSetGroupID(pid: gatePID, path: path) {
                return .failure(.slot(.gateUnavailable("\(path) cannot be trusted: \(why); vaultctl does not talk to it")))
            }
            let words = f.text.split(separator: " ")
            guard words.count == 3, words[0] == GateRequest.version, ["locked", "unlocked"].contains(words[2]) else {
                return .failure(.slot(.gateUnavailable("\(path) speaks another version of the protocol (\(Quote.text(f.text))); install vaultctl and its gate together")))
            }
            lockedAtStart = words[2] == "locked"
            return .success(words[1] == "protected")
        case .success(let f) where f.word == .refused:
            return .failure(GateRefusal.decode(f.text) ?? .slot(.gateUnavailable(SlotErrorText.oneLine(f.text))))
        case .success:
            return .failure(.slot(.gateUnavailable("\(path) did not start the exchange with its hello")))
        case .failure(let f):
            return .failure(.slot(.gateUnavailable("\(path) did not answer (\(Self.words(f)))")))
        }
    }

    /// Sends `request` (and `value`, for a store) and relays the exchange until its result.
    public func request(_ request: GateRequest, value: SecretBytes? = nil) throws(VaultError) -> SecretBytes {
        _ = try start()
        lastLook = nil
        guard let reader else { throw .slot(.gateUnavailable("it is not running")) }
        guard GateFrame(.request, text: request.text).write(to: toGate),
              value.map({ GateFrame(.secret, $0).write(to: toGate) }) ?? true else {
            throw .slot(.gateUnavailable("\(path) stopped reading (\(String(cString: strerror(errno))))"))
        }
        let quick: Bool
        switch request {
        case .holding, .names, .lock: quick = true
        default: quick = false
        }
        // One bound for the whole request (an authentication's questions, a finger, a key), not one a frame.
        let deadline = Deadline(secondsFromNow: quick ? Self.quickSeconds : promptSeconds)
        while true {
            let frame: GateFrame
            switch reader.next(within: max(0.001, Double(deadline.remainingMilliseconds) / 1000)) {
            case .success(let f): frame = f
            case .failure(.endOfInput) where !quick && exitStatus(within: 1) == AuthenticationDeadline.exitStatus:
                // The gate ended itself at the authentication's bound (root's, tightened by the user's).
                throw .authenticationTimedOut(seconds: nil)
            case .failure(.timedOut) where request.mayAsk:
                throw .authenticationTimedOut(seconds: nil)
            case .failure(let f): throw .slot(.gateUnavailable("\(path) did not finish the request (\(Self.words(f)))"))
            }
            switch frame.word {
            case .ok: return frame.payload
            case .refused:
                throw GateRefusal.decode(frame.text) ?? .slot(.gateUnavailable(SlotErrorText.oneLine(frame.text)))
            case .info, .error:
                source.show(frame.text, isError: frame.word == .error)
            case .promptHidden, .promptShown:
                // A request that never asks gets no question relayed to the person.
                guard request.mayAsk else { throw .slot(.gateUnavailable("\(path) asked a question during a request that never asks one")) }
                let reply: GateFrame
                switch source.answer(frame.text, echo: frame.word == .promptShown) {
                case .success(let answer): reply = GateFrame(.answer, answer)
                case .failure(let error): reply = GateFrame(.cancel, text: Vault.reason(error))
                }
                guard reply.write(to: toGate) else {
                    // Gone while the person answered: at its bound, or otherwise.
                    if exitStatus(within: 1) == AuthenticationDeadline.exitStatus { throw .authenticationTimedOut(seconds: nil) }
                    throw .slot(.gateUnavailable("\(path) stopped reading (\(String(cString: strerror(errno))))"))
                }
            default:
                throw .slot(.gateUnavailable("\(path) sent '\(frame.word.rawValue)' out of turn"))
            }
        }
    }

    static func words(_ f: GateFrameReader.Failure) -> String {
        switch f {
        case .endOfInput: return "it exited"
        case .malformed: return "it sent something that is not of its protocol"
        case .timedOut: return "no answer in time"
        case .io(let e): return String(cString: strerror(e))
        }
    }
}
