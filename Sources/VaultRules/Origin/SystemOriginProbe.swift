#if canImport(Glibc)
import Glibc
#endif

/// Gathers ``OriginEvidence`` from the running system: utmp, `/proc`, and the environment.
///
/// - The controlling terminal (see ``ControllingTerminal``) and its `USER_PROCESS` record in utmp.
/// - The parent chain through `/proc/<pid>/stat` from `getppid()` up to pid 1 (at most 64 steps); an
///   SSH server in it sets `sshdAncestor`.
/// - For the sshd processes there, nearest first, the peer of the established TCP connection among
///   their sockets (`/proc/<pid>/fd`, `/proc/<pid>/net/tcp{,6}`); readable as root, rarely otherwise.
/// - `SSH_CONNECTION` and `SSH_CLIENT`.
///
/// Everything fails soft to "no evidence" and nothing blocks: only bounded reads of `/proc` text files,
/// readlink, and glibc's utmp reader.
///
/// `Sendable`: no stored state.
public struct SystemOriginProbe: OriginProbe {
    public init() {}

    public func gather() -> OriginEvidence {
        var evidence = OriginEvidence()
        let me = ProcStat.read(pid: getpid())
        let chain = ProcStat.ancestry(from: getppid())

        let line = me.map { ControllingTerminal.line(ttyNr: $0.ttyNr) } ?? ControllingTerminal.lineOfFirstTerminalFD()
        if let line {
            var preferred = Set(chain.map(\.pid))
            preferred.insert(getpid())
            if let me { preferred.insert(me.session) }
            evidence.utmpHost = UtmpRecords.host(forLine: line, preferring: preferred, in: UtmpRecords.userProcesses())
        }

        let servers = chain.filter { ProcStat.isSSHServer($0.comm) }
        evidence.sshdAncestor = !servers.isEmpty
        evidence.sshdPeer = SocketPeer.clientAddress(ofProcesses: servers.filter { ProcStat.holdsSessionSocket($0.comm) }.map(\.pid))

        evidence.sshConnection = environment("SSH_CONNECTION")
        evidence.sshClient = environment("SSH_CLIENT")
        return evidence
    }

    private func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
