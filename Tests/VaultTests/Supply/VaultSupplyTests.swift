import Foundation
import Testing
@testable import Vault
@testable import VaultRules

/// `Vault.supply`: the slot allows supply, the origin is nearby, the rate limit does not block, the target is
/// still locked — each refused before any prompt — then PAM, then the target check again, then delivery.
@Suite struct VaultSupplyTests {
    let rig = SupplyRig()

    // MARK: Delivery

    @Test func aSupplyHandsTheExactSecretToTheConsumerAfterOnePrompt() throws {
        try rig.given(api, holds: "hunter2\u{0}\n")
        let (delivered, error) = rig.supply(api)
        #expect(error == nil, "\(String(describing: error))")
        #expect(delivered == Array("hunter2\u{0}\n".utf8))
        #expect(rig.gate.reasons == ["supply slot 'api'"])
        #expect(rig.log.entries.filter { !$0.contains(".holding") } == ["gate.verify", "device.read api"],
                "PAM before the secret is read")
        // The look before the prompt is the one a read follows: the slot may make ready what that read needs.
        #expect(rig.log.entries.first == "device.holdingBeforeRead api", "\(rig.log.entries)")
    }

    @Test func aSuccessfulSupplyRecordsWhenAndFromWhere() throws {
        try rig.given(api, holds: "s")
        #expect(try rig.permissions.lastSupply(api) == nil)
        let origin = Origin(verdict: .nearby, description: "ssh from 192.168.1.20 per SSH_CONNECTION")
        _ = rig.supply(api, origin: origin)
        let last = try #require(try rig.permissions.lastSupply(api))
        #expect(last == SupplyState.LastSupply(time: rig.clock.now(), origin: "ssh from 192.168.1.20 per SSH_CONNECTION"))
    }

    @Test func aStillLockedTargetIsAskedBeforeThePromptAgainBeforeDeliveryAndOnceAfter() throws {
        try rig.given(api, holds: "s")
        let check = CountingScript.unlockedByDelivery(in: rig.fixture.folder)
        let (delivered, error) = rig.supply(api, target: check.target)
        #expect(error == nil, "\(String(describing: error))")
        #expect(delivered != nil)
        #expect(check.runs == 3, "before the prompt, right before delivery, and once after to see it took")
    }

    /// A consumer that exits 0 but leaves the target locked did not accept the secret (a stale password):
    /// that is a failed supply, counted, and no last supply is recorded.
    @Test func aTargetStillLockedAfterASuccessfulCommandIsAFailedSupply() throws {
        try rig.given(api, holds: "s")
        let check = CountingScript(in: rig.fixture.folder, exiting: 0)
        let (_, error) = rig.supply(api, target: check.target)
        #expect(error?.consumerFailure?.contains("still locked") == true, "\(String(describing: error))")
        #expect(try rig.permissions.lastSupply(api) == nil)
    }

    // MARK: Refusals before any prompt, in order

    @Test func aSlotThatDoesNotAllowSupplyIsRefusedBeforeAnything() throws {
        try rig.given(api, holds: "s", allowed: false)
        let (delivered, error) = rig.supply(api)
        let why = try #require(error?.refusal, "\(String(describing: error))")
        #expect(why.contains("'api'") && why.contains("allow-supply api on"), "says how to allow it: \(why)")
        #expect(delivered == nil)
        #expect(rig.gate.calls == 0)
        #expect(rig.log.entries.isEmpty, "not even a look at the slots: \(rig.log.entries)")
    }

    @Test func supplyIsOffByDefaultAndThePolicyCanTurnItOn() throws {
        let off = SupplyRig(allowByDefault: false)
        try off.given(api, holds: "s", allowed: false)
        #expect(off.supply(api).error?.refusal != nil)

        let on = SupplyRig(allowByDefault: true)
        try on.given(api, holds: "s", allowed: false)
        #expect(on.supply(api).error == nil)

        try on.permissions.setAllowed(api, false)
        #expect(on.supply(api).error?.refusal != nil, "a slot's own 'off' wins over the default")
    }

    @Test func aRemoteOriginIsRefusedBeforeThePrompt() throws {
        try rig.given(api, holds: "s")
        let (delivered, error) = rig.supply(api, origin: .remoteForTests)
        let why = try #require(error?.refusal, "\(String(describing: error))")
        #expect(why.contains("remote"), "\(why)")
        #expect(why.contains("100.64.1.2"), "names where it comes from: \(why)")
        #expect(delivered == nil)
        #expect(rig.gate.calls == 0)
    }

    @Test func aBlockedRateLimitIsRefusedBeforeThePrompt() throws {
        try rig.given(api, holds: "s")
        try rig.block()
        let (delivered, error) = rig.supply(api)
        #expect(error?.blockedUntil == rig.clock.now() + 300, "\(String(describing: error))")
        #expect(delivered == nil)
        #expect(rig.gate.calls == 0)
    }

    @Test func aTargetThatIsNotLockedIsRefusedBeforeThePrompt() throws {
        try rig.given(api, holds: "s")
        let check = CountingScript(in: rig.fixture.folder, exiting: 3)
        let (delivered, error) = rig.supply(api, target: check.target)
        let why = try #require(error?.alreadyUnlocked, "\(String(describing: error))")
        #expect(why.contains("already unlocked") && why.contains("3"), "names the check's status: \(why)")
        #expect(delivered == nil)
        #expect(rig.gate.calls == 0)
        #expect(check.runs == 1)
    }

    /// Everything is wrong at once; fixing one thing at a time shows the next check in line.
    @Test func theChecksRunInTheDocumentedOrder() throws {
        try rig.given(api, holds: "s", allowed: false)
        try rig.block()
        let check = CountingScript(in: rig.fixture.folder, exiting: 1)

        var error = rig.supply(api, origin: .remoteForTests, target: check.target).error
        #expect(error?.refusal?.contains("allow-supply") == true, "1: the slot allows supply — \(String(describing: error))")

        try rig.permissions.setAllowed(api, true)
        error = rig.supply(api, origin: .remoteForTests, target: check.target).error
        #expect(error?.refusal?.contains("remote") == true, "2: the origin — \(String(describing: error))")

        error = rig.supply(api, origin: .nearbyForTests, target: check.target).error
        #expect(error?.blockedUntil != nil, "3: the rate limit — \(String(describing: error))")
        #expect(check.runs == 0, "the target check runs only after the first three passed")

        rig.clock.advance(300)
        error = rig.supply(api, origin: .nearbyForTests, target: check.target).error
        #expect(error?.alreadyUnlocked?.contains("already unlocked") == true, "4: the target — \(String(describing: error))")
        #expect(check.runs == 1)

        #expect(rig.gate.calls == 0, "no prompt for any of them")
    }

    @Test func anEmptySlotIsReportedWithoutAPrompt() throws {
        try rig.permissions.setAllowed(api, true)
        let error = rig.supply(api).error
        guard case .empty? = error?.slotError else {
            Issue.record("expected .slot(.empty), got \(String(describing: error))")
            return
        }
        #expect(rig.gate.calls == 0)
    }

    @Test func aLockedCollectionIsReportedWithoutAPrompt() throws {
        rig.fixture.sync.seed(api, "s")
        try rig.fixture.given(api, recordedAs: .sync)
        try rig.permissions.setAllowed(api, true)
        rig.fixture.sync.isLocked = true
        let error = rig.supply(api).error
        #expect(error?.isLocked == true, "\(String(describing: error))")
        #expect(rig.gate.calls == 0)
    }

    // MARK: After the prompt

    @Test func aWrongPasswordDeliversNothingAndSkipsTheSecondTargetCheck() throws {
        try rig.given(api, holds: "s")
        rig.gate.passes = false
        let check = CountingScript(in: rig.fixture.folder, exiting: 0)
        let (delivered, error) = rig.supply(api, target: check.target)
        #expect(error?.isAuthenticationFailed == true, "\(String(describing: error))")
        #expect(delivered == nil)
        #expect(check.runs == 1)
        #expect(!rig.log.entries.contains("device.read api"), "the secret is never read")
    }

    @Test func aTargetUnlockedDuringThePromptGetsNothing() throws {
        try rig.given(api, holds: "s")
        let check = CountingScript.unlockingAfterFirstRun(in: rig.fixture.folder)
        let (delivered, error) = rig.supply(api, target: check.target)
        let why = try #require(error?.alreadyUnlocked, "\(String(describing: error))")
        #expect(why.contains("unlocked"), "\(why)")
        #expect(delivered == nil)
        #expect(rig.gate.calls == 1)
        #expect(check.runs == 2)
        #expect(try rig.permissions.lastSupply(api) == nil)
    }

    @Test func aFailingConsumerIsReportedAndRecordsNoSupply() throws {
        try rig.given(api, holds: "s")
        let (delivered, error) = rig.supply(api, consumerFails: "'sshfs' failed with exit status 3")
        #expect(delivered != nil, "the secret was handed over")
        #expect(error?.consumerFailure == "'sshfs' failed with exit status 3", "\(String(describing: error))")
        #expect(try rig.permissions.lastSupply(api) == nil)
    }

    @Test func aFailingConsumerCountsAgainstTheRateLimit() throws {
        let rig = SupplyRig(policy: RateLimitPolicy(failures: 1, windowSeconds: 300, blockSeconds: 300))
        try rig.given(api, holds: "s")
        let error = rig.supply(api, consumerFails: "'x' failed with exit status 1").error
        #expect(error?.consumerFailureBlockedUntil == rig.clock.now() + 300, "\(String(describing: error))")
        #expect(rig.supply(api).error?.blockedUntil != nil)
        #expect(rig.gate.calls == 1)
    }

    /// The issue: "3 failures (failed PAM on any gated command, failed supplies) within 5 minutes block". Each
    /// failed supply passed PAM first, and `RateLimitedGate` clears the count on every PAM success, so the
    /// count never gets past one failed supply.
    @Test func threeFailedSuppliesWithinTheWindowBlock() throws {
        try rig.given(api, holds: "s")
        var errors: [VaultError?] = []
        for _ in 0..<3 {
            errors.append(rig.supply(api, consumerFails: "'x' failed with exit status 1").error)
            rig.clock.advance(10)
        }
        #expect(errors.prefix(2).allSatisfy { $0?.consumerFailure != nil }, "\(errors)")
        #expect(errors[2]?.consumerFailureBlockedUntil != nil, "the third failed supply starts a block: \(String(describing: errors[2]))")
        #expect(rig.supply(api).error?.blockedUntil != nil, "a fourth supply is blocked")
    }
}
