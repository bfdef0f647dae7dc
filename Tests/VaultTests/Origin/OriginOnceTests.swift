import Testing
@testable import VaultRules

/// One judgement of the origin for a whole command: its audit lines, `unlock` and PAM's PAM_RHOST agree.
@Suite struct OriginOnceTests {
    final class Count: @unchecked Sendable { var n = 0 }

    @Test func theEvidenceIsGatheredOnceAndEveryNeedGetsTheSameOrigin() throws {
        let gathered = Count()
        let once = OriginOnce(evidence: {
            gathered.n += 1
            return OriginEvidence(utmpHost: "203.0.113.9", sshdAncestor: true, sshdPeer: "203.0.113.9")
        })
        let first = try once.origin { () throws(VaultError) -> Policy in Policy.builtIn }
        var nearbyEverywhere = Policy.builtIn
        nearbyEverywhere.remoteRanges = [try #require(IPRange("100.64.0.0/10"))]
        nearbyEverywhere.nearbyRanges = [try #require(IPRange("0.0.0.0/0"))]
        // A later need with other ranges still gets the first judgement: a command never sees two.
        let second = try once.origin { () throws(VaultError) -> Policy in nearbyEverywhere }
        #expect(first.verdict == .remote && second == first)
        #expect(gathered.n == 1)
    }

    @Test func aPolicyThatCannotBeReadJudgesNothingAndALaterNeedJudges() throws {
        let once = OriginOnce(evidence: { OriginEvidence(utmpHost: "") })
        var refused = false
        do { _ = try once.origin { () throws(VaultError) -> Policy in throw .configuration(path: "policy.json", detail: "bad") } } catch {
            refused = true
        }
        #expect(refused)
        #expect(try once.origin { () throws(VaultError) -> Policy in Policy.builtIn }.verdict == .nearby)
    }
}
