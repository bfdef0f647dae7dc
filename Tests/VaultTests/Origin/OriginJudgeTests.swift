import Testing
@testable import VaultRules

@Suite struct OriginJudgeTests {
    // MARK: The utmp host of our terminal

    @Test(arguments: ["100.64.0.1", "100.127.255.254", "::ffff:100.64.3.4", "fd7a:115c:a1e0::1", "fd7a:115c:a1e0:ab12:4843:cd96:6258:b240"])
    func tailscaleAddressInUtmpIsRemote(host: String) {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: host, sshdAncestor: true))

        #expect(origin.verdict == .remote)
        #expect(origin.description.contains("in remote range"))
    }

    @Test func tailscaleDescriptionNamesAddressAndRange() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "100.64.1.2", sshdAncestor: true))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 100.64.1.2 (in remote range 100.64.0.0/10)"))
    }

    @Test(arguments: ["100.128.0.1", "100.63.255.255", "8.8.8.8", "2001:db8::1"])
    func publicAddressInUtmpIsRemote(host: String) {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: host, sshdAncestor: true))

        #expect(origin == Origin(verdict: .remote, description: "ssh from \(host) (not in a nearby range)"))
    }

    @Test func addressJustOutsideTailscaleV6IsNearbyAsUniqueLocal() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "fd7a:115c:a1e1::1", sshdAncestor: true))

        #expect(origin == Origin(verdict: .nearby, description: "ssh from fd7a:115c:a1e1::1"))
    }

    @Test(arguments: ["192.168.1.20", "10.1.2.3", "172.31.255.255", "169.254.7.7", "fe80::1%eth0", "::ffff:192.168.1.20"])
    func lanAddressInUtmpIsNearby(host: String) {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: host, sshdAncestor: true))

        #expect(origin == Origin(verdict: .nearby, description: "ssh from \(host)"))
    }

    /// `ssh localhost` from a remote session, or a forwarded port, shows up as a loopback peer: it hides
    /// where the person is, so it cannot be judged.
    @Test(arguments: ["::1", "127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1"])
    func loopbackLoginAddressIsRemote(host: String) {
        #expect(OriginRanges.judge(OriginEvidence(utmpHost: host, sshdAncestor: true)).verdict == .remote)
        #expect(OriginRanges.judge(OriginEvidence(sshdAncestor: true, sshdPeer: host)).verdict == .remote)
    }

    @Test func utmpHostWithoutSshdIsALogin() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "192.168.1.20"))

        #expect(origin == Origin(verdict: .nearby, description: "login from 192.168.1.20"))
    }

    @Test(arguments: [":0", ":1", ":1.0", ":10.2"])
    func xDisplayInUtmpIsLocal(host: String) {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: host))

        #expect(origin == Origin(verdict: .nearby, description: "local session (display \(host))"))
    }

    @Test func emptyUtmpHostIsLocal() {
        #expect(OriginRanges.judge(OriginEvidence(utmpHost: "")) == Origin(verdict: .nearby, description: "local session"))
    }

    @Test(arguments: ["host.example", "localhost:10.0", ":0.", "::0:", ":S.0", "tmux(1234).%0", "mosh [4242]", " 192.168.1.20", "192.168.1.20 "])
    func hostThatIsNotAnAddressCannotBeJudged(host: String) {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: host))

        #expect(origin.verdict == .remote)
        #expect(origin.description.hasPrefix("login from an address that cannot be judged ("))
    }

    @Test func unjudgeableHostIsQuotedSafely() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "evil\n\u{1b}[2J'host", sshdAncestor: true))

        #expect(origin == Origin(verdict: .remote, description: "ssh from an address that cannot be judged ('evil??[2J?host')"))
    }

    @Test func longUnjudgeableHostIsCutShort() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: String(repeating: "a", count: 256)))

        #expect(origin.description == "login from an address that cannot be judged ('\(String(repeating: "a", count: 64))…')")
    }

    // MARK: An sshd ancestor

    @Test func sshdAncestorWithoutPeerIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(sshdAncestor: true))

        #expect(origin.verdict == .remote)
        #expect(origin.description.contains("cannot be judged"))
    }

    @Test func sshdAncestorWithLanPeerIsNearby() {
        let origin = OriginRanges.judge(OriginEvidence(sshdAncestor: true, sshdPeer: "192.168.1.20"))

        #expect(origin == Origin(verdict: .nearby, description: "ssh from 192.168.1.20"))
    }

    @Test func sshdAncestorWithTailscalePeerIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(sshdAncestor: true, sshdPeer: "fd7a:115c:a1e0::5"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from fd7a:115c:a1e0::5 (in remote range fd7a:115c:a1e0::/48)"))
    }

    @Test func sshdAncestorWithLanUtmpHostAndNoPeerIsNearby() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "10.1.2.3", sshdAncestor: true))

        #expect(origin == Origin(verdict: .nearby, description: "ssh from 10.1.2.3"))
    }

    @Test func sshdAncestorWithDisplayUtmpHostAndNoPeerIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: ":0", sshdAncestor: true))

        #expect(origin.verdict == .remote)
    }

    @Test func sshdPeerStricterThanUtmpWins() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "192.168.1.20", sshdAncestor: true, sshdPeer: "100.100.1.1"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 100.100.1.1 (in remote range 100.64.0.0/10)"))
    }

    @Test func lanPeerDoesNotLoosenARemoteUtmpHost() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "100.64.0.9", sshdAncestor: true, sshdPeer: "192.168.1.20"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 100.64.0.9 (in remote range 100.64.0.0/10)"))
    }

    @Test func garbagePeerIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(sshdAncestor: true, sshdPeer: "nonsense"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from an address that cannot be judged ('nonsense')"))
    }

    // MARK: No evidence

    @Test func noEvidenceIsALocalSession() {
        #expect(OriginRanges.judge(OriginEvidence()) == Origin(verdict: .nearby, description: "local session"))
    }

    @Test func peerWithoutSshdAncestorIsIgnored() {
        // The probe never reports one; the judge only reads the peer of an sshd it found.
        #expect(OriginRanges.judge(OriginEvidence(sshdPeer: "100.64.0.1")).verdict == .nearby)
    }

    // MARK: SSH_CONNECTION and SSH_CLIENT only make it stricter

    @Test func sshConnectionWithTailscaleClientIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(sshConnection: "100.64.1.2 52144 192.168.1.5 22"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 100.64.1.2 per SSH_CONNECTION (in remote range 100.64.0.0/10)"))
    }

    @Test func sshClientWithTailscaleClientIsRemote() {
        let origin = OriginRanges.judge(OriginEvidence(sshClient: "fd7a:115c:a1e0::3 52144 22"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from fd7a:115c:a1e0::3 per SSH_CLIENT (in remote range fd7a:115c:a1e0::/48)"))
    }

    @Test func sshConnectionWithLanClientLeavesLocalSessionNearby() {
        let origin = OriginRanges.judge(OriginEvidence(sshConnection: "192.168.1.20 52144 192.168.1.5 22",
                                                       sshClient: "192.168.1.20 52144 22"))

        #expect(origin == Origin(verdict: .nearby, description: "local session"))
    }

    @Test func sshConnectionWithLanClientNeverLoosensTailscaleUtmpHost() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "100.64.0.1", sshdAncestor: true,
                                                       sshConnection: "192.168.1.20 52144 192.168.1.5 22",
                                                       sshClient: "192.168.1.20 52144 22"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 100.64.0.1 (in remote range 100.64.0.0/10)"))
    }

    @Test func sshConnectionWithLanClientNeverLoosensSshdWithoutPeer() {
        let origin = OriginRanges.judge(OriginEvidence(sshdAncestor: true, sshConnection: "192.168.1.20 52144 192.168.1.5 22"))

        #expect(origin.verdict == .remote)
    }

    @Test func sshConnectionWithTailscaleClientOverridesLanUtmpHost() {
        let origin = OriginRanges.judge(OriginEvidence(utmpHost: "192.168.1.20", sshdAncestor: true,
                                                       sshConnection: "100.64.0.7 52144 192.168.1.5 22"))

        #expect(origin.verdict == .remote)
        #expect(origin.description == "ssh from 100.64.0.7 per SSH_CONNECTION (in remote range 100.64.0.0/10)")
    }

    @Test(arguments: ["garbage", "host.example 52144 192.168.1.5 22", "192.168.1.20", "192.168.1.20 52144 192.168.1.5",
                      "192.168.1.20 port 192.168.1.5 22", "192.168.1.20 52144 192.168.1.5 99999", "192.168.1.20 52144 nowhere 22"])
    func sshConnectionGarbageIsRemote(value: String) {
        let origin = OriginRanges.judge(OriginEvidence(sshConnection: value))

        #expect(origin.verdict == .remote)
        #expect(origin.description.hasPrefix("ssh from an address that cannot be judged per SSH_CONNECTION ("))
    }

    @Test(arguments: ["garbage", "host.example 52144 22", "192.168.1.20 52144", "192.168.1.20 52144 22 extra", "192.168.1.20 -1 22"])
    func sshClientGarbageIsRemote(value: String) {
        let origin = OriginRanges.judge(OriginEvidence(sshClient: value))

        #expect(origin.verdict == .remote)
        #expect(origin.description.hasPrefix("ssh from an address that cannot be judged per SSH_CLIENT ("))
    }

    @Test(arguments: ["", "   "])
    func emptySshVariablesCountAsUnset(value: String) {
        #expect(OriginRanges.judge(OriginEvidence(sshConnection: value, sshClient: value)).verdict == .nearby)
    }

    @Test func sshClientAloneIsJudgedWhenConnectionIsFine() {
        let origin = OriginRanges.judge(OriginEvidence(sshConnection: "192.168.1.20 52144 192.168.1.5 22",
                                                       sshClient: "8.8.8.8 52144 22"))

        #expect(origin == Origin(verdict: .remote, description: "ssh from 8.8.8.8 per SSH_CLIENT (not in a nearby range)"))
    }

    // MARK: Ranges come from the caller

    @Test func emptyNearbyRangesMakeEveryAddressRemote() {
        let origin = OriginJudge.judge(OriginEvidence(utmpHost: "192.168.1.20"), remoteRanges: [], nearbyRanges: [])

        #expect(origin.verdict == .remote)
    }

    @Test func remoteRangesWinOverNearbyRanges() {
        let origin = OriginJudge.judge(OriginEvidence(utmpHost: "192.168.1.20"),
                                       remoteRanges: [IPRange("192.168.1.0/24")!], nearbyRanges: OriginRanges.nearby)

        #expect(origin == Origin(verdict: .remote, description: "login from 192.168.1.20 (in remote range 192.168.1.0/24)"))
    }
}
