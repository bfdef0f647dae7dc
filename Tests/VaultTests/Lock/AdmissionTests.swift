import Testing
@testable import VaultRules

/// The one order of the checks before a command or a gate request: the lock, the log, the rate limit.
@Suite struct AdmissionTests {
    struct Refused: Error, Equatable { let by: String }

    /// Runs `admission` with every check failing, recording which ran; the refusal that came out.
    func run(_ admission: Admission, locked: Bool = true) -> (ran: [String], refusedBy: String?) {
        var ran: [String] = []
        do throws(Refused) {
            try admission.check(isLocked: { () throws(Refused) in ran.append("lock"); return locked },
                                locked: { Refused(by: "lock") },
                                auditLog: { () throws(Refused) in ran.append("log"); throw Refused(by: "log") },
                                rateLimit: { () throws(Refused) in ran.append("limit"); throw Refused(by: "limit") })
            return (ran, nil)
        } catch {
            return (ran, error.by)
        }
    }

    @Test func theLockComesFirstThenTheLogThenTheRateLimit() {
        #expect(run([.rateLimit, .auditLog, .vaultLock]) == (["lock"], "lock"))
        #expect(run([.rateLimit, .auditLog, .vaultLock], locked: false) == (["lock", "log"], "log"))
        #expect(run([.rateLimit, .vaultLock], locked: false) == (["lock", "limit"], "limit"))
    }

    @Test func checksNotAskedForDoNotRun() {
        #expect(run([]) == ([], nil))
        #expect(run([.auditLog]) == (["log"], "log"))
    }
}
