/// What the system says about where this process's session comes from.
///
/// `utmpHost`, `sshdAncestor` and `sshdPeer` come from sources a remote user cannot forge (the utmp file is
/// written by root; process ancestry and socket tables by the kernel); `sshConnection` and `sshClient` are
/// environment variables anyone can set, so ``OriginJudge`` lets them only make a verdict stricter.
///
/// `Sendable`: plain values.
public struct OriginEvidence: Sendable, Equatable {
    /// `ut_host` of the utmp record for our controlling terminal, if any.
    public var utmpHost: String?
    /// An ancestor process is an SSH server (`sshd`, `sshd-session`, …, `dropbear`, or `tailscaled`,
    /// whose built-in SSH server runs sessions as its descendants).
    public var sshdAncestor: Bool
    /// The peer address of that sshd's TCP socket, if it could be read (usually only as root: sshd makes
    /// its session processes non-dumpable, so their `/proc/<pid>/fd` is closed to the user).
    public var sshdPeer: String?
    /// `$SSH_CONNECTION`: "client_ip client_port server_ip server_port".
    public var sshConnection: String?
    /// `$SSH_CLIENT`: "client_ip client_port server_port".
    public var sshClient: String?

    public init(utmpHost: String? = nil, sshdAncestor: Bool = false, sshdPeer: String? = nil,
                sshConnection: String? = nil, sshClient: String? = nil) {
        self.utmpHost = utmpHost
        self.sshdAncestor = sshdAncestor
        self.sshdPeer = sshdPeer
        self.sshConnection = sshConnection
        self.sshClient = sshClient
    }
}

/// Gathers ``OriginEvidence``; ``SystemOriginProbe`` asks the running system, tests pass fakes.
public protocol OriginProbe: Sendable {
    func gather() -> OriginEvidence
}
