@testable import VaultRules

/// The ranges the default policy passes to ``OriginJudge``.
enum OriginRanges {
    static let remote = ["100.64.0.0/10", "fd7a:115c:a1e0::/48"].map { IPRange($0)! }
    static let nearby = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                         "169.254.0.0/16", "fe80::/10", "fc00::/7"].map { IPRange($0)! }

    static func judge(_ evidence: OriginEvidence) -> Origin {
        OriginJudge.judge(evidence, remoteRanges: remote, nearbyRanges: nearby)
    }
}
