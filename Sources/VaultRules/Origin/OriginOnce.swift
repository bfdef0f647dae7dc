/// Where one command's session comes from (the CLI's command, or the gate's exchange), judged once on first
/// need (it walks /proc and utmp) by the policy's ranges, and the same answer for every later need: the
/// audit lines, the nearby check of `unlock` and PAM's `PAM_RHOST` never see two judgements.
///
/// `@unchecked Sendable`: made and used on one thread (the CLI's main one, or the gate's), as PAM's
/// callbacks are; it is handed to PAM's `remoteHost` closure, which runs there too.
public final class OriginOnce: @unchecked Sendable {
    private let evidence: () -> OriginEvidence
    private var judged: Origin?

    /// `evidence`: gathered when first needed (the gate's may be gathering already on a thread of its own).
    public init(evidence: @escaping () -> OriginEvidence = { SystemOriginProbe().gather() }) {
        self.evidence = evidence
    }

    /// The origin, judged by `policy`'s ranges the first time (later calls answer the same).
    public func origin(_ policy: () throws(VaultError) -> Policy) throws(VaultError) -> Origin {
        if let judged { return judged }
        let gathered = evidence()
        let p = try policy()
        let o = OriginJudge.judge(gathered, remoteRanges: p.remoteRanges, nearbyRanges: p.nearbyRanges)
        judged = o
        return o
    }
}
