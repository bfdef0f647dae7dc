#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import VaultRules

@Suite struct SystemOriginProbeTests {
    @Test(.timeLimit(.minutes(1)))
    func gatherReturnsAndFindsNoSshdOutsideSsh() {
        let evidence = SystemOriginProbe().gather()

        if getenv("SSH_CONNECTION") == nil, getenv("SSH_CLIENT") == nil {
            #expect(!evidence.sshdAncestor)
            #expect(evidence.sshdPeer == nil)
        }
        #expect(evidence.sshConnection == getenv("SSH_CONNECTION").map { String(cString: $0) })
    }

    @Test func ownStatParses() throws {
        let me = try #require(ProcStat.read(pid: getpid()))

        #expect(me.pid == getpid())
        #expect(me.ppid == getppid())
    }

    @Test func ancestryOfThisProcessStartsAtItsParent() {
        let chain = ProcStat.ancestry(from: getppid())

        #expect(chain.first?.pid == getppid())
        #expect(chain.count <= 64)
    }

    @Test func ownSocketsAreListed() throws {
        // Our own fd folder is readable (unless another test made this process non-dumpable first).
        if let inodes = SocketPeer.socketInodes(ofProcess: getpid()) {
            #expect(inodes.count < 4096)
        }
    }

    @Test func unreadableProcessGivesNoPeer() {
        #expect(SocketPeer.clientAddress(ofProcesses: [Int32.max, -1]) == nil)
        #expect(ProcStat.read(pid: Int32.max) == nil)
    }

    @Test func procTablesReadLineByLine() {
        var lines = 0
        let opened = ProcFile.forEachLine("/proc/self/net/tcp", limit: 1 << 20) { line in
            if lines > 0 { #expect(ProcNetTCP.parseLine(line) != nil) }
            lines += 1
            return true
        }
        if opened { #expect(lines >= 1) }
    }

    @Test func missingFileReadsAsNil() {
        #expect(ProcFile.read("/proc/nonexistent-\(getpid())") == nil)
        #expect(ProcFile.names(in: "/nonexistent-\(getpid())", limit: 10) == nil)
        #expect(ProcFile.link("/nonexistent-\(getpid())") == nil)
    }

    @Test func readStopsAtTheLimit() {
        #expect(ProcFile.read("/proc/self/stat", limit: 5)?.count == 5)
    }
}
