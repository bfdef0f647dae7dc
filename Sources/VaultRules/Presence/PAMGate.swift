import CPAM
#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The presence gate on Linux: a fresh PAM transaction for service `vaultctl` and the invoking user,
/// `pam_authenticate` then `pam_acct_mgmt`, every time. No credentials are cached.
///
/// This is the one file that imports CPAM. Without `/etc/pam.d/vaultctl`, PAM uses the `other` service.
public struct PAMGate: AnswerReportingGate {
    public static let service = "vaultctl"
    /// Where PAM's questions and messages go: the CLI's password source, or the gate's relay to the CLI.
    let source: any PromptRelay
    let user: String
    /// `PAM_RHOST` for this transaction: the origin check's answer for a remote session (`Origin.pamRemoteHost`),
    /// asked when PAM starts; nil for a nearby one.
    let remoteHost: @Sendable () -> String?
    /// The bound on the whole authentication (`prompt.authenticationSeconds`), read when PAM starts, what is
    /// said when it passes (nil: nothing; vaultctl-gate's caller says it), and what to do first when nothing
    /// was guessed by then (no answer given, no failure reported by a module); nil: no bound but each question's.
    let deadline: @Sendable () -> (seconds: Int, message: String?, unguessed: (@Sendable () -> Void)?)?
    /// A transaction started ahead for this user (`Transaction.start`), used by the first authentication
    /// instead of starting one; nil, used already or for another user: it starts its own.
    let started: Transaction?

    public init(source: any PromptRelay, user: String, remoteHost: @escaping @Sendable () -> String? = { nil },
                deadline: @escaping @Sendable () -> (seconds: Int, message: String?, unguessed: (@Sendable () -> Void)?)? = { nil },
                started: Transaction? = nil) {
        self.source = source
        self.user = user
        self.remoteHost = remoteHost
        self.deadline = deadline
        self.started = started
    }

    /// A PAM transaction started ahead of its authentication: `pam_start` reads the service's stack and
    /// loads its modules, most of what starting costs (their libraries' constructors run as they load), and
    /// calls none of their functions (those run from `pam_authenticate` on). vaultctl-gate starts one while
    /// it waits for a request it was told will authenticate. The authentication that takes it sets its own
    /// conversation then (libpam keeps a copy of the one given to `pam_start`, here one that answers
    /// nothing). Taken once; never ended when untaken (the gate's exchange ends with its process).
    ///
    /// `@unchecked Sendable` (PAMGate is Sendable): made and taken on one thread, the gate's main one.
    public final class Transaction: @unchecked Sendable {
        fileprivate let handle: OpaquePointer
        fileprivate let user: String
        private var taken = false

        private init(handle: OpaquePointer, user: String) {
            self.handle = handle
            self.user = user
        }

        /// Started now for `user`, loading libpam first if it is not yet; nil when libpam or the stack cannot
        /// start (the authentication then starts its own, and says why it cannot).
        public static func start(user: String) -> Transaction? {
            guard case .success(let pam) = loadedPAM else { return nil }
            var none = pam_conv(conv: answersNothing, appdata_ptr: nil)
            var handle: OpaquePointer?
            guard pam.pam_start(PAMGate.service, user, &none, &handle) == PAM_SUCCESS, let handle else { return nil }
            return Transaction(handle: handle, user: user)
        }

        /// The handle, the first time it is asked for by an authentication of its user.
        fileprivate func take(for user: String) -> OpaquePointer? {
            guard !taken, user == self.user else { return nil }
            taken = true
            return handle
        }
    }

    /// What the unprotected path says when the bound passes.
    public static func deadlineMessage(_ seconds: Int) -> String {
        "vaultctl: The authentication did not finish within \(seconds) s (prompt.authenticationSeconds in your policy): no finger on the reader or no key touched in time? Nothing was counted unless an answer had been given; try again."
    }

    /// The invoking user's login name (from the real uid, not from the environment).
    public static func invokingUser() -> String? { invokingAccount()?.name }

    /// The invoking user's login name and home, from one look in the user database by the real uid (never the
    /// environment's `HOME`); the home is "/nonexistent" when the entry names none.
    public static func invokingAccount() -> (name: String, home: String)? {
        guard let pw = getpwuid(getuid()), let name = pw.pointee.pw_name else { return nil }
        return (String(cString: name), pw.pointee.pw_dir.map { String(cString: $0) } ?? "/nonexistent")
    }

    public func verify(reason: String) throws(VaultError) {
        try verify(reason: reason, onAnswer: { true })
    }

    public func verify(reason: String, onAnswer: @escaping () -> Bool) throws(VaultError) {
        let context = Conversation(source: source, reason: reason, onAnswer: onAnswer)
        let unmanaged = Unmanaged.passRetained(context)
        defer { unmanaged.release() }
        var conv = pam_conv(conv: converse, appdata_ptr: unmanaged.toOpaque())
        let pam: vaultctl_pam
        switch loadedPAM {
        case .success(let functions): pam = functions
        case .failure(let e): throw .authenticationUnavailable("vaultctl could not load libpam (\(e.reason)); install it (Debian: libpam0g)")
        }
        var handle: OpaquePointer?
        var rc: Int32
        if let ahead = started?.take(for: user) {
            handle = ahead
            rc = pam.pam_set_item(ahead, PAM_CONV, &conv)
            guard rc == PAM_SUCCESS else {
                _ = pam.pam_end(ahead, rc)
                throw .authenticationUnavailable("PAM could not be given its conversation (\(rc))")
            }
        } else {
            rc = pam.pam_start(PAMGate.service, user, &conv, &handle)
        }
        guard rc == PAM_SUCCESS, let handle else {
            throw .authenticationUnavailable("PAM could not start for service '\(PAMGate.service)' (\(rc)); check /etc/pam.d/\(PAMGate.service)")
        }
        // A module that refuses remote sessions by itself (pam_fprintd: a finger on this machine's reader says
        // nothing about a person who is elsewhere) must know. Not able to tell it: no authentication.
        let remote = remoteHost()
        if let host = remote {
            rc = host.withCString { pam.pam_set_item(handle, PAM_RHOST, $0) }
            guard rc == PAM_SUCCESS else {
                _ = pam.pam_end(handle, rc)
                throw .authenticationUnavailable("PAM could not be told that this session is remote (\(rc))")
            }
        }
        var bound: AuthenticationDeadline?
        if let d = deadline() {
            // The place is taken back only when the deadline wins the race against every answer (see GuessRace).
            let race = context.race
            bound = AuthenticationDeadline(seconds: d.seconds, message: d.message,
                                           beforeExit: d.unguessed.map { unguessed in { if race.expire() { unguessed() } } })
            // No bound, no authentication (a caller's RLIMIT_NPROC or RLIMIT_NOFILE): fail closed, nothing counted.
            guard bound != nil else {
                _ = pam.pam_end(handle, PAM_SUCCESS)
                throw .authenticationUnavailable("vaultctl could not start the authentication's time limit (\(String(cString: strerror(errno)))); nothing was asked or counted")
            }
        }
        rc = pam.pam_authenticate(handle, 0)
        let authenticated = rc == PAM_SUCCESS
        if authenticated { rc = pam.pam_acct_mgmt(handle, 0) }
        bound?.finish()
        let text = pam.pam_strerror(handle, rc).map { String(cString: $0) } ?? "PAM error \(rc)"
        _ = pam.pam_end(handle, rc)
        if rc == PAM_SUCCESS { return }
        if authenticated {
            // The password was right; the account check said no. Not a guess.
            throw .accountRefused("PAM refused the account '\(user)': \(text)")
        }
        if context.answered, let failure = context.failure {
            // A password was handed over, then a later question went unanswered (a stack that asks twice,
            // an askpass that answers once, standard input that ends): still a guess PAM judged. Reporting
            // it as "not authenticated" would give a guesser free tries.
            throw .authenticationFailed("PAM did not authenticate '\(user)' after a password was given (\(failure.conversationReason))")
        }
        if let failure = context.failure { throw failure }
        if context.answered && rc == PAM_AUTHINFO_UNAVAIL, PAMStack.read()?.missingKeyMappings() != nil {
            // A password, then pam_u2f with no key mappings file: counted as any failure after an answer is;
            // only the words say what is missing.
            throw .authenticationFailed("PAM did not authenticate '\(user)' after a password was given (\(text)): \(PAMStack.keyMappingsRemedy(user: user))")
        }
        // Any failed authentication after a password was given counts as a wrong guess, whatever PAM's code:
        // no error path may give a guesser free tries.
        if context.answered || rc == PAM_AUTH_ERR || rc == PAM_USER_UNKNOWN || rc == PAM_MAXTRIES
            || rc == PAM_CRED_INSUFFICIENT {
            // Counted even when nothing was asked (a stack of pam_deny, a fingerprint that did not match).
            throw .authenticationFailed(context.answered ? "PAM rejected the password for '\(user)' (\(text))"
                                                         : "PAM refused to authenticate '\(user)' (\(text))")
        }
        if remote != nil && rc == PAM_AUTHINFO_UNAVAIL {
            // pam_fprintd, and modules like it, will not vouch for a person who is elsewhere.
            throw .authenticationUnavailable("this session is remote, and the PAM stack of service '\(PAMGate.service)' does not authenticate remote sessions (\(text)): a finger or a key on this machine says nothing about a person elsewhere")
        }
        if rc == PAM_AUTHINFO_UNAVAIL && context.errorShown {
            // A module that reported a failure ("Failed to match fingerprint") and then gave up (its other tries
            // unused, or timed out): a guess was judged, so it counts.
            throw .authenticationFailed("PAM refused to authenticate '\(user)' after a failed try (\(text))")
        }
        if rc == PAM_AUTHINFO_UNAVAIL && !context.showed && !context.answered, let stack = PAMStack.read(),
           case let devices = stack.factors.filter({ $0 != "password" }), !devices.isEmpty {
            // A module for a device said nothing and gave up: it found no reader or key (or no fprintd), or,
            // for pam_u2f, the stack's key mappings file is missing (the words differ, nothing else).
            if stack.missingKeyMappings() != nil {
                throw .authenticationUnavailable("\(PAMStack.keyMappingsRemedy(user: user)) (\(text)); nothing was counted")
            }
            throw .authenticationUnavailable("the PAM stack asks for a \(devices.joined(separator: " and ")), and PAM could not reach one (no reader or key, or fprintd not running for a fingerprint): \(text); nothing was counted. A reader or key lost for good: root puts the password stack back with \(Installation.current.pamStackCommand("password"))")
        }
        if rc == PAM_AUTHINFO_UNAVAIL && context.showed && !context.answered {
            // Not a guess: nothing was given (a finger not put on the reader in time, a key not touched).
            throw .authenticationUnavailable("PAM's module asked for something above and did not get it in time, or its device is gone (\(text)); nothing was counted, try again")
        }
        throw .authenticationUnavailable("PAM failed for service '\(PAMGate.service)': \(text)")
    }
}

extension VaultError {
    /// The words of a conversation failure (always `notAuthenticated`), for quoting inside another error.
    fileprivate var conversationReason: String {
        if case .notAuthenticated(let why) = self { return why }
        return "the conversation failed"
    }
}

/// State the C conversation callback reaches through `appdata_ptr`. Not `Sendable`: one PAM transaction,
/// on one thread.
private final class Conversation {
    let source: any PromptRelay
    let reason: String
    var failure: VaultError?
    /// Whether a password was handed to PAM: a conversation call that returned its answers.
    var answered = false
    /// Whether a module said something (PAM_TEXT_INFO, PAM_ERROR_MSG): "Swipe your finger", "touch the key".
    var showed = false
    /// Whether a module reported a failure (PAM_ERROR_MSG: "Failed to match fingerprint"): a guess was judged.
    var errorShown = false
    /// An answer given or a failure reported, against the authentication's deadline on its own thread: decided
    /// once, so that no answer reaches PAM after the deadline took the attempt's place back.
    let race = GuessRace()
    let onAnswer: () -> Bool

    init(source: any PromptRelay, reason: String, onAnswer: @escaping () -> Bool) {
        self.source = source
        self.reason = reason
        self.onAnswer = onAnswer
    }
}

/// The PAM conversation function: answers prompts from the relay (`PromptRelay.answer`: never one with a
/// NUL), each prompt saying why it is asked; hands messages to the relay to show.
/// Responses are `calloc`/`malloc`'d because PAM frees them.
private func converse(_ count: Int32,
                      _ messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
                      _ responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?,
                      _ appdata: UnsafeMutableRawPointer?) -> Int32 {
    guard count > 0, let messages, let responses, let appdata else { return PAM_CONV_ERR }
    let context = Unmanaged<Conversation>.fromOpaque(appdata).takeUnretainedValue()
    guard let replies = calloc(Int(count), MemoryLayout<pam_response>.stride)?
        .bindMemory(to: pam_response.self, capacity: Int(count)) else { return PAM_BUF_ERR }
    for i in 0..<Int(count) {
        guard let message = messages[i] else { continue }
        let style = message.pointee.msg_style
        let text = message.pointee.msg.map { String(cString: $0) } ?? ""
        switch style {
        case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
            // The person sees why they are asked: "vaultctl (read slot 'x'): Password: ".
            let prompt = context.reason.isEmpty ? text : "vaultctl (\(context.reason)): \(text)"
            switch context.source.answer(prompt, echo: style == PAM_PROMPT_ECHO_ON) {
            case .success(let secret):
                replies[i].resp = secret.withUnsafeBytes { raw -> UnsafeMutablePointer<CChar>? in
                    guard let p = malloc(raw.count + 1) else { return nil }
                    p.copyMemory(from: raw.baseAddress!, byteCount: raw.count)
                    p.storeBytes(of: 0, toByteOffset: raw.count, as: UInt8.self)
                    return p.assumingMemoryBound(to: CChar.self)
                }
                replies[i].resp_retcode = 0
            case .failure(let error):
                context.failure = error
                wipeAndFree(replies, upTo: i)
                return PAM_CONV_ERR
            }
        case PAM_ERROR_MSG, PAM_TEXT_INFO:
            if style == PAM_ERROR_MSG {
                // The module judged something (a finger that did not match) before saying so: from now on the
                // deadline cannot take the place back (if it passed already, the process is ending).
                context.errorShown = true
                _ = context.race.claimGuess()
            }
            if !text.isEmpty {
                context.showed = true
                context.source.show(text, isError: style == PAM_ERROR_MSG)
            }
        default:
            wipeAndFree(replies, upTo: i)
            return PAM_CONV_ERR
        }
    }
    // Only now does PAM get the answers: a call that fails part-way hands over nothing.
    let answeredSomething = (0..<Int(count)).contains { replies[$0].resp != nil }
    if answeredSomething {
        // Claimed before the answers go anywhere: once claimed, the deadline's thread cannot take the place
        // back, and once it has (the deadline passed), no answer goes to PAM: the process is ending, and a
        // password judged after the place was given back would be a guess never counted.
        guard context.race.claimGuess() else {
            context.failure = .notAuthenticated("the authentication's time ran out before the answer was given")
            wipeAndFree(replies, upTo: Int(count))
            return PAM_CONV_ERR
        }
        // An answer PAM judges is a guess the rate limit must be able to count: one it cannot (no room to
        // mark the attempt) never reaches PAM, so no verdict comes of it.
        if !context.answered && !context.onAnswer() {
            context.failure = .notAuthenticated("vaultctl could not record this attempt (is the disk full?), so the password was not checked")
            wipeAndFree(replies, upTo: Int(count))
            return PAM_CONV_ERR
        }
        context.answered = true
    }
    responses.pointee = replies
    return PAM_SUCCESS
}

/// The conversation a transaction started ahead is given until its authentication sets its own: it answers
/// nothing (no module asks before `pam_authenticate`).
private func answersNothing(_ count: Int32, _ messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
                            _ responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?,
                            _ appdata: UnsafeMutableRawPointer?) -> Int32 {
    PAM_CONV_ERR
}

private func wipeAndFree(_ replies: UnsafeMutablePointer<pam_response>, upTo end: Int) {
    for j in 0..<end {
        if let r = replies[j].resp {
            memset(r, 0, strlen(r))
            free(r)
        }
    }
    free(replies)
}

/// libpam's functions, loaded by the first authentication (CPAM/shim.h says why it is loaded, not linked),
/// or why it could not be.
private let loadedPAM: Result<vaultctl_pam, PAMUnavailable> = {
    let table = UnsafeMutablePointer<vaultctl_pam>.allocate(capacity: 1)
    defer { table.deallocate() }
    var error: UnsafePointer<CChar>?
    guard vaultctl_pam_load(table, &error) == 0 else {
        return .failure(PAMUnavailable(reason: error.map { String(cString: $0) } ?? "libpam.so.0 could not be loaded"))
    }
    return .success(table.pointee)
}()

/// Why libpam could not be loaded: the loader's words.
private struct PAMUnavailable: Error, Sendable {
    let reason: String
}

/// A table of function addresses, written once by the loader and only read after: safe to share.
extension vaultctl_pam: @unchecked @retroactive Sendable {}
