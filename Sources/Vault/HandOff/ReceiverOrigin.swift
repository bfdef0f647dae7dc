import GateProtocol
import VaultRules

/// Where the sender of a hand-off is, judged by the receiver from what sshd says about the connection.
///
/// `vaultctl receive` runs as sshd's forced command, with no terminal: the usual session evidence (utmp,
/// the peer of sshd's socket) is mostly unreadable to a user other than root. What remains is what sshd
/// itself sets for the command: `SSH_CONNECTION` ("client_ip client_port server_ip server_port"), which a
/// key restricted to a forced command cannot change (sshd sets it after any environment the client sends).
/// Its client address stands in for the socket's peer when that cannot be read, and the whole is judged by
/// ``OriginJudge`` with the same ranges as every other session: a Tailscale address (100.64.0.0/10,
/// fd7a:115c:a1e0::/48, also IPv4-mapped), loopback, or anything that cannot be judged is remote.
public enum ReceiverOrigin {
    /// The verdict; nil `sshConnection` (not run by sshd) is remote.
    public static func judge(_ gathered: OriginEvidence, remoteRanges: [IPRange], nearbyRanges: [IPRange]) -> Origin {
        guard let connection = gathered.sshConnection, !connection.isEmpty else {
            return Origin(verdict: .remote, description: "not an ssh connection (SSH_CONNECTION is not set), so the sender's address cannot be judged")
        }
        var evidence = gathered
        evidence.sshdAncestor = true
        if evidence.sshdPeer?.isEmpty ?? true {
            let fields = connection.split(separator: " ", omittingEmptySubsequences: true)
            evidence.sshdPeer = fields.count == 4 ? String(fields[0]) : connection
        }
        return OriginJudge.judge(evidence, remoteRanges: remoteRanges, nearbyRanges: nearbyRanges)
    }
}
