import Testing
@testable import VaultRules

/// Rows as the kernel writes them on a little-endian machine (every Linux target Swift supports).
@Suite struct ProcNetTCPTests {
    static let tcp = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
           1: 0501A8C0:0016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222 4 0000000000000000 20 4 31 10 -1
           2: 0501A8C0:9C40 08080808:01BB 01 00000000:00000000 00:00000000 00000000  1000        0 3333 1 0000000000000000 20 4 31 10 -1
           3: 0100007F:0277 0100007F:A2B6 06 00000000:00000000 03:00000DAD 00000000     0        0 0 3 0000000000000000

        """

    static let tcp6 = """
          sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
           1: 5C117AFD0000E0A10000000002000000:0016 5C117AFD0000E0A10000000001000000:C350 01 00000000:00000000 02:00096F1A 00000000     0        0 5555 2 0000000000000000 22 4 30 10 -1
           2: 0000000000000000FFFF00000501A8C0:0016 0000000000000000FFFF00004240640A:E0F2 01 00000000:00000000 02:00096F1A 00000000     0        0 6666 2 0000000000000000 22 4 30 10 -1

        """

    @Test func ipv4RowParses() throws {
        let row = try #require(ProcNetTCP.parseLine(Self.tcp.split(separator: "\n")[2]))

        #expect(row == TCPSocketEntry(local: IPAddress("192.168.1.5")!, localPort: 22, remote: IPAddress("192.168.1.20")!,
                                      remotePort: 0xD431, state: TCPSocketEntry.established, inode: 2222))
    }

    @Test func ipv6RowParses() throws {
        let row = try #require(ProcNetTCP.parseLine(Self.tcp6.split(separator: "\n")[2]))

        #expect(row.local == IPAddress("fd7a:115c:a1e0::2"))
        #expect(row.remote == IPAddress("fd7a:115c:a1e0::1"))
        #expect(row.remotePort == 50000)
        #expect(row.inode == 5555)
    }

    @Test func ipv4MappedRowInTcp6ReadsAsIPv4() throws {
        let row = try #require(ProcNetTCP.parseLine(Self.tcp6.split(separator: "\n")[3]))

        #expect(row.remote.description == "10.100.64.66")
        #expect(row.remote.isV4)
    }

    @Test func wholeTableSkipsTheHeader() {
        let rows = ProcNetTCP.parse(Self.tcp)

        #expect(rows.map(\.inode) == [1111, 2222, 3333, 0])
        #expect(rows.map(\.state) == [0x0A, 0x01, 0x01, 0x06])
    }

    @Test(arguments: [
        "",
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
        "   1: 0501A8C0:0016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0",
        "   1 0501A8C0:0016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C:0016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C0:016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C0:0016 1401A8C0-D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C0:0016 1401A8CG:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C0:0016 1401A8C0:D431 1 00000000:00000000 02:000A7214 00000000     0        0 2222",
        "   1: 0501A8C0:0016 1401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 -2222",
        "   1: 0501A8C0:0016 +401A8C0:D431 01 00000000:00000000 02:000A7214 00000000     0        0 2222",
    ])
    func malformedRowIsSkipped(line: String) {
        #expect(ProcNetTCP.parseLine(Substring(line)) == nil)
    }

    // MARK: Finding the client among an sshd's sockets

    @Test func singleEstablishedSocketIsTheClient() {
        let rows = ProcNetTCP.parse(Self.tcp)

        #expect(SocketPeer.clientPeer(among: rows, ownInodes: [2222]) == IPAddress("192.168.1.20"))
        #expect(SocketPeer.clientPeer(among: ProcNetTCP.parse(Self.tcp6), ownInodes: [5555]) == IPAddress("fd7a:115c:a1e0::1"))
    }

    @Test func forwardedConnectionIsNotTakenForTheClient() {
        // inode 3333 is a -L forward from sshd to 8.8.8.8:443; the client came to port 22, where the daemon listens.
        let rows = ProcNetTCP.parse(Self.tcp)

        #expect(SocketPeer.clientPeer(among: rows, ownInodes: [2222, 3333]) == IPAddress("192.168.1.20"))
    }

    @Test func listeningAndOtherSocketsAreNotPeers() {
        let rows = ProcNetTCP.parse(Self.tcp)

        #expect(SocketPeer.clientPeer(among: rows, ownInodes: [1111]) == nil)
        #expect(SocketPeer.clientPeer(among: rows, ownInodes: [9999]) == nil)
    }

    @Test func twoClientsWithoutADaemonPortHaveNoAnswer() {
        let rows = ProcNetTCP.parse(Self.tcp).filter { $0.state != TCPSocketEntry.listen }

        #expect(SocketPeer.clientPeer(among: rows, ownInodes: [2222, 3333]) == nil)
    }

    @Test func socketLinkGivesItsInode() {
        #expect(SocketPeer.socketInode("socket:[2222]") == 2222)
        #expect(SocketPeer.socketInode("socket:[]") == nil)
        #expect(SocketPeer.socketInode("pipe:[2222]") == nil)
        #expect(SocketPeer.socketInode("socket:[+2]") == nil)
        #expect(SocketPeer.socketInode("/dev/pts/0") == nil)
    }
}
