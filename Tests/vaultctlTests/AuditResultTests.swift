import Testing
import Slots
import GateProtocol
import VaultRules
@testable import vaultctl

/// Issue 34, point 4: an audit line's result comes from what failed (the error's case, the exit code), never
/// from the words of its message, which may quote anything.
@Suite("audit result words")
struct AuditResultTests {
    @Test func wordsThatLookLikeAnotherResultDoNotMakeIt() {
        #expect(CommandFailure(code: .denied, message: "Authentication failed: only in the words; a refusal.").auditResult == .refused)
        #expect(CommandFailure(code: .failure, message: "Not authenticated: cancelled at the password prompt.").auditResult == .failed)
        #expect(ErrorReport.failure(.refused("a check quoting 'cancelled at the password prompt'")).auditResult == .refused)
    }

    @Test func theErrorsCaseDecides() throws {
        let mail = try #require(SlotName("mail"))
        let cases: [(VaultError, AuditResult)] = [
            (.authenticationFailed("PAM rejected the password for 'me' (Authentication failure)"), .failed),
            (.authenticationFailedAndBlocked("PAM rejected the password", until: 100), .failed),
            // A password given, then a later question cancelled: a guess PAM judged, counted, so failed.
            (.authenticationFailed("PAM did not authenticate 'me' after a password was given (cancelled at the password prompt)"), .failed),
            (.cancelledPrompt, .cancelled),
            (.notAuthenticated("the askpass program p exited with status 1, so nothing was answered"), .refused),
            (.accountRefused("PAM refused the account 'me'"), .refused),
            (.refused("this request comes from a remote session"), .refused),
            (.blocked(until: 100, now: 50), .refused),
            (.vaultLocked, .refused),
            (.busy(retryAfter: 1), .refused),
            (.consumerFailed("ssh-add exited 1 after reading the secret"), .failed),
            (.auditUnwritable, .failed),
            (.slot(.empty(mail)), .error),
            (.authenticationUnavailable("PAM could not start"), .error),
        ]
        for (error, result) in cases { #expect(ErrorReport.failure(error).auditResult == result, "\(error)") }
        #expect(ErrorReport.failure(.cancelledPrompt).message == "Not authenticated: cancelled at the password prompt.")
    }

    /// A failure made again with more words keeps the result it had.
    @Test func aFailureRewordedKeepsItsResult() {
        let cancelled = ErrorReport.failure(.cancelledPrompt)
        let reworded = CommandFailure(code: cancelled.code, message: "\(cancelled.message) More words.", result: cancelled.result)
        #expect(reworded.auditResult == .cancelled)
        #expect(AuditResult(authentication: nil) == .ok && AuditResult(authentication: .authenticationUnavailable("x")) == nil)
    }

    /// A cancel keeps its meaning through the gate: its words make the round trip as a `not-authenticated` refusal.
    @Test func aCancelledPromptIsStillOneBackFromTheGate() throws {
        let back = try #require(GateRefusal.decode(GateRefusal.encode(.cancelledPrompt)))
        #expect(back.isCancelledPrompt)
        #expect(!VaultError.notAuthenticated("the askpass program p exited with status 1, so nothing was answered").isCancelledPrompt)
        #expect(!VaultError.authenticationFailed("cancelled at the password prompt").isCancelledPrompt)
    }
}
