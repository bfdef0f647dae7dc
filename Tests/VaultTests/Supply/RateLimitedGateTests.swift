import TestSupport
import Foundation
import Testing
@testable import VaultRules

/// The presence gate with the rate limit around it: while blocked nobody is asked; a wrong password counts.
@Suite struct RateLimitedGateTests {
    let folder = TemporaryFolder()
    let clock = FakeClock()
    let log = OperationLog()

    func gate(_ inner: any PresenceGate) -> (RateLimitedGate, RateLimiter) {
        let limiter = RateLimiter(stateFolder: folder.appending("state"), policy: .shipped, clock: clock)
        return (RateLimitedGate(inner, limiter: limiter), limiter)
    }

    @Test func aPassingVerifyPasses() throws {
        let inner = FakeGate(passes: true, log: log)
        let (gate, _) = gate(inner)
        try gate.verify(reason: "read slot 'api'")
        #expect(inner.reasons == ["read slot 'api'"])
    }

    @Test func theThirdWrongPasswordBlocksAndTheFourthIsNeverAsked() throws {
        let inner = FakeGate(passes: false, log: log)
        let (gate, limiter) = gate(inner)

        #expect(thrownError { () throws(VaultError) in try gate.verify(reason: "r") }?.isAuthenticationFailed == true)
        #expect(thrownError { () throws(VaultError) in try gate.verify(reason: "r") }?.isAuthenticationFailed == true)
        let third = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
        let until = try #require(third?.authenticationFailureBlockedUntil, "the failure that blocks says so: \(String(describing: third))")
        #expect(until == clock.now() + 300)

        inner.passes = true
        let fourth = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
        #expect(fourth?.blockedUntil == until)
        #expect(inner.calls == 3, "no prompt while blocked")
        #expect(try limiter.blockedUntil() == until)
    }

    /// The failure before the block says so, and when the oldest failure stops counting; the first does not.
    @Test func theFailureBeforeTheBlockSaysOneMoreBlocks() throws {
        let inner = FakeGate(passes: false, log: log)
        let (gate, _) = gate(inner)
        let first = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
        if case .authenticationFailed(let why)? = first { #expect(!why.contains("One more failure"), "\(why)") } else { Issue.record("\(String(describing: first))") }
        clock.advance(60)
        let second = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
        guard case .authenticationFailed(let why)? = second else { Issue.record("\(String(describing: second))"); return }
        #expect(why.contains("One more failure before \(TimeText.localClock(clock.now() - 60 + 300)) blocks gated commands for 5 min"), "\(why)")
    }

    @Test func afterTheBlockThePersonIsAskedAgain() throws {
        let inner = FakeGate(passes: false, log: log)
        let (gate, _) = gate(inner)
        for _ in 0..<3 { _ = thrownError { () throws(VaultError) in try gate.verify(reason: "r") } }
        clock.advance(300)
        inner.passes = true
        try gate.verify(reason: "r")
        #expect(inner.calls == 4)
    }

    @Test func aPassingVerifyDoesNotResetTheCount() throws {
        let inner = FakeGate(passes: false, log: log)
        let (gate, limiter) = gate(inner)
        for _ in 0..<2 { _ = thrownError { () throws(VaultError) in try gate.verify(reason: "r") } }
        inner.passes = true
        try gate.verify(reason: "r")
        inner.passes = false
        _ = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
        #expect(try limiter.blockedUntil() != nil, "the third failure in the window blocks, success or not in between")
    }

    /// PAM being misconfigured is not a guess at the password: it must not lock the person out.
    @Test func anUnavailableGateDoesNotCount() throws {
        let (gate, limiter) = gate(BrokenGate())
        for _ in 0..<5 {
            let error = thrownError { () throws(VaultError) in try gate.verify(reason: "r") }
            guard case .authenticationUnavailable? = error else {
                Issue.record("expected .authenticationUnavailable, got \(String(describing: error))")
                return
            }
        }
        #expect(try limiter.blockedUntil() == nil)
    }
}

/// A gate whose PAM stack is broken. `Sendable`: no state.
private struct BrokenGate: PresenceGate {
    func verify(reason: String) throws(VaultError) {
        throw .authenticationUnavailable("the PAM service file is missing")
    }
}
