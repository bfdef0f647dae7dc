import Foundation
import Testing
@testable import GateService
@testable import GateProtocol
@testable import VaultRules
import Slots
import TestSupport
import Vault

/// A gate of the test's own in place of PAM: answers from a script (nil: the person is there), and asks its
/// question through the session's relay first when `asks` (so the CLI's side of a prompt can be played).
final class ScriptedGate: PresenceGate, @unchecked Sendable {
    private let lock = NSLock()
    private var verdicts: [VaultError?] = []
    private var _reasons: [String] = []
    /// The relay of the authentication under way (set by the session's `makeGate`).
    var relay: (any PromptRelay)?
    var asks = false

    /// The next verdicts, in order; after them every authentication passes.
    func script(_ next: VaultError?...) { locked { verdicts += next } }
    var reasons: [String] { locked { _reasons } }

    func verify(reason: String) throws(VaultError) {
        let verdict: VaultError? = locked {
            _reasons.append(reason)
            return verdicts.isEmpty ? nil : verdicts.removeFirst()
        }
        if asks, let relay {
            switch relay.ask("Password: ", echo: false) {
            case .failure(let e): throw e
            case .success: break
            }
        }
        if let verdict { throw verdict }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

/// One exchange with a `GateSession` that runs on a thread of its own over pipes, as the gate's `main` runs it:
/// its store and the account's home in a temporary folder, its origin and its policy the test's, PAM replaced
/// by a `ScriptedGate`. The test plays the CLI.
final class GateExchange {
    let folder = TemporaryFolder()
    let gate = ScriptedGate()
    let session: GateSession
    /// The test's ends: what it writes to the gate, what it reads from it.
    private(set) var toGate: Int32
    let fromGate: Int32
    let reader: GateFrameReader
    private var ended: BackgroundThread.Later<Int32>?
    /// The information frames (`info`, `error`) the gate sent while answering the last request.
    var shown: [String] = []

    static let nearby = OriginEvidence(utmpHost: "")
    static let remote = OriginEvidence(utmpHost: "203.0.113.9", sshdAncestor: true, sshdPeer: "203.0.113.9")

    init(policy: Policy = .builtIn, origin: OriginEvidence = GateExchange.nearby, store other: GateExchange? = nil) {
        let base = other?.storeBase ?? folder.appending("store")
        let home = other?.home ?? folder.appending("home")
        mkdir(base, 0o700)
        mkdir(home, 0o700)
        var a: [Int32] = [0, 0], b: [Int32] = [0, 0]
        // Close-on-exec: a test of another suite that spawns a process meanwhile must not keep an end open (the
        // session would never see the end of input, and `finish` would wait for its idle bound).
        precondition(pipe(&a) == 0 && pipe(&b) == 0)
        for fd in a + b { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        toGate = a[1]
        fromGate = b[0]
        reader = GateFrameReader(fd: b[0])
        let machine = MachineIdentity(id: Array("0123456789abcdef0123456789abcdef".utf8))
        session = GateSession(store: GateStore(base: base, uid: getuid()), user: "tester", home: home, machine: machine,
                              policy: { policy }, tpm: nil, input: a[0], output: b[1],
                              prepared: BackgroundThread.later { origin })
        session.makeGate = { [gate] asking in
            gate.relay = asking.relay
            return gate
        }
        let (session, input, output) = (Unchecked(session), a[0], b[1])
        ended = BackgroundThread.later {
            let code = session.value.run()
            close(input)
            close(output)
            return code
        }
    }

    var storeBase: String { session.store.base }
    var home: String { session.account.home }
    var audit: [AuditEntry] { (try? session.audit.entries(limit: 1000)) ?? [] }

    /// The gate's first frame.
    func hello() throws -> String {
        let frame = try reader.next(within: 10).get()
        #expect(frame.word == .hello)
        return frame.text
    }

    /// Sends a request (and its value) and reads up to its answer; questions are answered with `answer`, or
    /// cancelled when it is nil.
    @discardableResult
    func send(_ request: GateRequest, value: String? = nil, answer: String? = "secret") throws -> Reply {
        shown = []
        #expect(GateFrame(.request, text: request.text).write(to: toGate))
        if let value {
            #expect(GateFrame(.secret, Array(value.utf8).withUnsafeBytes { SecretBytes(copying: $0) }).write(to: toGate))
        }
        while true {
            let frame = try reader.next(within: 10).get()
            switch frame.word {
            case .ok: return .ok(frame.text)
            case .refused: return .refused(try #require(GateRefusal.decode(frame.text)))
            case .info, .error: shown.append(frame.text)
            case .promptHidden, .promptShown:
                if let answer {
                    #expect(GateFrame(.answer, Array(answer.utf8).withUnsafeBytes { SecretBytes(copying: $0) }).write(to: toGate))
                } else {
                    #expect(GateFrame(.cancel, text: "").write(to: toGate))
                }
            default: Issue.record("the gate sent \(frame.word) while answering"); return .ok("")
            }
        }
    }

    /// Closes the test's end and waits for the session: its exit status.
    func finish() -> Int32 {
        if toGate >= 0 { close(toGate) }
        toGate = -1
        return ended?.value() ?? -1
    }

    /// Closes the test's end without waiting (the CLI gone).
    func hangUp() {
        close(toGate)
        toGate = -1
    }

    deinit {
        _ = finish()
        close(fromGate)
    }
}

/// The gate's answer to a request: its text, or the error of its refusal (equal when their protocol
/// encodings are: the error's case and its words).
enum Reply: Equatable {
    case ok(String)
    case refused(VaultError)

    static func == (l: Reply, r: Reply) -> Bool {
        switch (l, r) {
        case (.ok(let a), .ok(let b)): return a == b
        case (.refused(let a), .refused(let b)): return GateRefusal.encode(a) == GateRefusal.encode(b)
        default: return false
        }
    }
}

/// A value handed to the session's thread; the test does not touch it while the session runs a request.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension Policy {
    /// The built-in policy with a rate limit that blocks (for 300 s) once `failures` failures fall within
    /// 300 s: small enough for a test to use up.
    static func allowingFailures(_ failures: Int) -> Policy {
        var policy = Policy.builtIn
        policy.rateLimit = RateLimitPolicy(failures: failures, windowSeconds: 300, blockSeconds: 300)
        return policy
    }
}
