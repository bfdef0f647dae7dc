import Testing
@testable import Vault
@testable import VaultRules

/// The receiver's judgement of the sender, from what sshd says (SSH_CONNECTION, and the socket's peer when
/// it can be read): the seed's rule, through the same ``OriginJudge`` as every session.
@Suite struct ReceiverOriginTests {
    static func judge(_ connection: String?, peer: String? = nil) -> Origin {
        ReceiverOrigin.judge(OriginEvidence(sshdPeer: peer, sshConnection: connection),
                             remoteRanges: OriginRanges.remote, nearbyRanges: OriginRanges.nearby)
    }

    @Test(arguments: ["192.168.77.2", "10.1.2.3", "fe80::1", "fd00::5"])
    func aLANSenderIsNearby(_ address: String) {
        let origin = Self.judge("\(address) 50522 192.168.77.1 22")
        #expect(origin == Origin(verdict: .nearby, description: "ssh from \(address)"), "\(origin)")
    }

    @Test(arguments: ["100.100.77.2", "100.64.0.1", "100.127.255.254", "::ffff:100.64.3.4", "fd7a:115c:a1e0::17"])
    func aTailscaleSenderIsRemote(_ address: String) {
        let origin = Self.judge("\(address) 50522 100.100.77.1 22")
        #expect(origin.verdict == .remote && origin.description.contains("in remote range"), "\(origin)")
    }

    @Test(arguments: ["", "garbage", "192.168.77.2 x 192.168.77.1 22", "host.example 1 2 3", "127.0.0.1 5000 127.0.0.1 22", "8.8.8.8 1 2.2.2.2 22"])
    func anUnjudgeableOrUnsetAddressIsRemote(_ connection: String) {
        #expect(Self.judge(connection).verdict == .remote, "\(connection.debugDescription)")
    }

    @Test func notRunBySSHDIsRemote() {
        #expect(Self.judge(nil).verdict == .remote)
    }

    @Test func theSocketsPeerWhenReadableIsJudgedAndTheStricterWins() {
        // The variable says LAN, the socket (root can read it) says Tailscale: remote.
        #expect(Self.judge("192.168.77.2 50522 192.168.77.1 22", peer: "100.100.77.2").verdict == .remote)
        // The socket says LAN, the variable says Tailscale: remote too.
        #expect(Self.judge("100.100.77.2 50522 192.168.77.1 22", peer: "192.168.77.2").verdict == .remote)
    }
}
