import TestSupport
import Foundation
import Testing
import Slots
@testable import Vault
@testable import VaultRules

/// `VaultError` is not `Equatable`; these pick out the supply and rate-limit cases for `#expect`.
extension VaultError {
    /// The end of the block when this is `.blocked`.
    var blockedUntil: Double? {
        if case .blocked(let until, _) = self { return until }
        return nil
    }

    /// The words when this is `.refused`.
    var refusal: String? {
        if case .refused(let why) = self { return why }
        return nil
    }

    /// Why nothing was supplied when `--if-locked` found the target already unlocked.
    var alreadyUnlocked: String? {
        if case .alreadyUnlocked(let why) = self { return why }
        return nil
    }

    /// The consumer's failure when this is `.consumerFailed`.
    var consumerFailure: String? {
        if case .consumerFailed(let why) = self { return why }
        return nil
    }

    /// The end of the block this consumer failure started, when this is `.consumerFailedAndBlocked`.
    var consumerFailureBlockedUntil: Double? {
        if case .consumerFailedAndBlocked(_, let until) = self { return until }
        return nil
    }

    /// The end of the block this authentication failure started, when this is `.authenticationFailedAndBlocked`.
    var authenticationFailureBlockedUntil: Double? {
        if case .authenticationFailedAndBlocked(_, let until) = self { return until }
        return nil
    }
}

/// The error a throwing call threw, or nil (and an issue) when it did not throw.
func thrownError(sourceLocation: SourceLocation = #_sourceLocation,
                 _ body: () throws(VaultError) -> Void) -> VaultError? {
    do {
        try body()
        Issue.record("expected an error, but it succeeded", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

extension Origin {
    static let nearbyForTests = Origin(verdict: .nearby, description: "local session")
    static let remoteForTests = Origin(verdict: .remote, description: "ssh from 100.64.1.2 (in remote range 100.64.0.0/10)")
}

extension RateLimitPolicy {
    /// The shipped numbers: 3 failures within 5 minutes block for 5 minutes.
    static let shipped = RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300)
}

/// A vault over the fakes of `VaultFixture`, gated the way the CLI gates it (`RateLimitedGate` around the fake
/// gate), with a real `SupplyState` and `RateLimiter` in the fixture's temporary folder and a `FakeClock`.
final class SupplyRig {
    let fixture = VaultFixture()
    let clock = FakeClock()
    let limiter: RateLimiter
    let permissions: SupplyState
    let vault: Vault

    init(policy: RateLimitPolicy = .shipped, allowByDefault: Bool = false) {
        let state = fixture.folder.appending("state")
        limiter = RateLimiter(stateFolder: state, policy: policy, clock: clock)
        permissions = SupplyState(stateFolder: state, allowByDefault: allowByDefault)
        vault = Vault(device: fixture.device, sync: fixture.sync, record: fixture.record,
                      gate: RateLimitedGate(fixture.gate, limiter: limiter))
    }

    var gate: FakeGate { fixture.gate }
    var log: OperationLog { fixture.log }
    var stateFolder: String { fixture.folder.appending("state") }

    /// Puts `text` in the device slot under `name`, records it there, and (by default) allows supplying it.
    func given(_ name: SlotName, holds text: String, allowed: Bool = true) throws {
        fixture.device.seed(name, text)
        try fixture.given(name, recordedAs: .device)
        if allowed { try permissions.setAllowed(name, true) }
        fixture.log.reset()
    }

    func checks(origin: Origin = .nearbyForTests, target: TargetCheck? = nil) -> SupplyChecks {
        SupplyChecks(permissions: permissions, origin: origin, limiter: limiter, target: target, clock: clock)
    }

    /// Runs `Vault.supply`; returns what the consumer received (nil when it was never called) and the error.
    func supply(_ name: SlotName, origin: Origin = .nearbyForTests, target: TargetCheck? = nil,
                consumerFails: String? = nil) -> (delivered: [UInt8]?, error: VaultError?) {
        var delivered: [UInt8]?
        do {
            try vault.supply(name, checks: checks(origin: origin, target: target)) { secret in
                delivered = secret.bytes
                return consumerFails
            }
            return (delivered, nil)
        } catch {
            return (delivered, error)
        }
    }

    /// Blocks the limiter now, with as many failures as the policy needs.
    func block() throws {
        for _ in 0..<limiter.policy.failures { try limiter.recordFailure() }
        try #require(try limiter.blockedUntil() != nil)
    }
}

/// A `/bin/sh` command line, and the file it appends a line to each time it runs.
struct CountingScript {
    let program: String
    let runsFile: String

    /// Appends a line to a file in `folder`, then exits with `status`.
    init(in folder: TemporaryFolder, exiting status: Int32) {
        runsFile = folder.appending("check-runs-\(UUID().uuidString)")
        program = "echo run >> '\(runsFile)'; exit \(status)"
    }

    /// Exits 0 the first time (still locked) and 1 from then on: the target got unlocked meanwhile.
    static func unlockingAfterFirstRun(in folder: TemporaryFolder) -> CountingScript {
        var script = CountingScript(in: folder, exiting: 0)
        script = CountingScript(program: """
            if [ -e '\(script.runsFile)' ]; then echo run >> '\(script.runsFile)'; exit 1; fi; echo run >> '\(script.runsFile)'; exit 0
            """, runsFile: script.runsFile)
        return script
    }

    /// Exits 0 (locked) for its first two runs, the ones before the prompt and before delivery, and 1 from
    /// then on: a target that the delivered secret unlocked.
    static func unlockedByDelivery(in folder: TemporaryFolder) -> CountingScript {
        let runs = CountingScript(in: folder, exiting: 0).runsFile
        return CountingScript(program: """
            echo run >> '\(runs)'; [ "$(wc -l < '\(runs)')" -le 2 ]
            """, runsFile: runs)
    }

    private init(program: String, runsFile: String) {
        self.program = program
        self.runsFile = runsFile
    }

    var target: TargetCheck { TargetCheck(program: program) }

    /// How many times it ran.
    var runs: Int {
        guard let text = try? String(contentsOfFile: runsFile, encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").count
    }
}
