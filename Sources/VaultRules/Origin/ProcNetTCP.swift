/// One row of `/proc/net/tcp` or `/proc/net/tcp6`.
///
/// A row reads "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …",
/// addresses as "HEX:PORT". The kernel prints each 32-bit word of the address with `%08X` as a host
/// integer: an IPv4 address is one word, IPv6 four; the port is plain big-endian hex. So a word's bytes in
/// host memory order are the address's bytes in network order, on either endianness.
struct TCPSocketEntry: Equatable, Sendable {
    var local: IPAddress
    var localPort: UInt16
    var remote: IPAddress
    var remotePort: UInt16
    /// The kernel's TCP state: 0x01 ESTABLISHED, 0x0A LISTEN.
    var state: UInt8
    var inode: UInt64

    static let established: UInt8 = 0x01
    static let listen: UInt8 = 0x0A
}

enum ProcNetTCP {
    /// Every row of a table's text that parses; the header and anything malformed are skipped.
    static func parse(_ text: String) -> [TCPSocketEntry] {
        text.split(separator: "\n").compactMap { parseLine($0) }
    }

    static func parseLine(_ line: Substring) -> TCPSocketEntry? {
        let f = line.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count >= 10, f[0].hasSuffix(":"),
              let (local, localPort) = endpoint(f[1]), let (remote, remotePort) = endpoint(f[2]),
              f[3].utf8.count == 2, let state = UInt8(f[3], radix: 16), isHex(f[3]),
              isDecimal(f[9]), let inode = UInt64(f[9]) else { return nil }
        return TCPSocketEntry(local: local, localPort: localPort, remote: remote, remotePort: remotePort,
                              state: state, inode: inode)
    }

    /// "0100007F:0016" (IPv4) or 32 hex digits and a port (IPv6).
    static func endpoint(_ text: Substring) -> (IPAddress, UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].utf8.count == 4, isHex(parts[1]), let port = UInt16(parts[1], radix: 16),
              isHex(parts[0]), parts[0].utf8.count == 8 || parts[0].utf8.count == 32 else { return nil }
        let hex = Array(parts[0].utf8)
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: hex.count, by: 8) {
            guard let word = UInt32(String(decoding: hex[start..<(start + 8)], as: UTF8.self), radix: 16) else { return nil }
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
        }
        if bytes.count == 4 { bytes = [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + bytes }
        return (IPAddress(bytes: bytes), port)
    }

    private static func isHex(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    private static func isDecimal(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.count <= 20 && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

/// Finds the client address of the SSH connection an sshd process serves, from its open sockets.
enum SocketPeer {
    /// The client address of the SSH connection served by the first of `pids` (nearest sshd first) whose
    /// sockets show one, as an address string. Nil when no sockets can be listed (another user's, or a
    /// non-dumpable process: the usual case unless we are root), which costs next to nothing, or when no
    /// single client connection stands out.
    ///
    /// The socket tables are read once, from the first readable process's network namespace (ours could
    /// differ). Reading them costs a few milliseconds each even when nearly empty: the kernel walks its
    /// whole connection hash table.
    static func clientAddress(ofProcesses pids: [Int32]) -> String? {
        let owned = pids.compactMap { pid in socketInodes(ofProcess: pid).flatMap { $0.isEmpty ? nil : (pid, $0) } }
        guard let first = owned.first else { return nil }
        let all = owned.reduce(into: Set<UInt64>()) { $0.formUnion($1.1) }
        var rows: [TCPSocketEntry] = []
        for table in ["tcp", "tcp6"] {
            ProcFile.forEachLine("/proc/\(first.0)/net/\(table)", limit: 32 << 20) { line in
                if let row = ProcNetTCP.parseLine(line), row.inode != 0,
                   all.contains(row.inode) || row.state == TCPSocketEntry.listen {
                    rows.append(row)
                }
                return rows.count < 100_000
            }
        }
        return owned.lazy.compactMap { clientPeer(among: rows, ownInodes: $0.1) }.first?.description
    }

    /// The inodes of `socket:[N]` links in `/proc/<pid>/fd`; nil if the folder cannot be listed.
    static func socketInodes(ofProcess pid: Int32, limit: Int = 4096) -> Set<UInt64>? {
        guard let fds = ProcFile.names(in: "/proc/\(pid)/fd", limit: limit) else { return nil }
        var inodes: Set<UInt64> = []
        for fd in fds {
            if let target = ProcFile.link("/proc/\(pid)/fd/\(fd)"), let inode = socketInode(target) {
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// 1234 from "socket:[1234]".
    static func socketInode(_ link: String) -> UInt64? {
        guard link.hasPrefix("socket:["), link.hasSuffix("]") else { return nil }
        let digits = link.dropFirst("socket:[".count).dropLast()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(digits)
    }

    /// Picks the SSH client among a process's established connections. sshd holds more than one when
    /// the user forwards ports; the client's connection is the one whose local port something *else*
    /// listens on (the sshd daemon), not a port this process opened or listens on itself. When that still
    /// leaves connections to different peers, there is no answer.
    static func clientPeer(among rows: [TCPSocketEntry], ownInodes: Set<UInt64>) -> IPAddress? {
        let established = rows.filter { $0.state == TCPSocketEntry.established && ownInodes.contains($0.inode) }
        guard established.count > 1 else { return established.first?.remote }
        let daemonPorts = Set(rows.filter { $0.state == TCPSocketEntry.listen && !ownInodes.contains($0.inode) }.map(\.localPort))
        let narrowed = established.filter { daemonPorts.contains($0.localPort) }
        let candidates = narrowed.isEmpty ? established : narrowed
        let peers = Set(candidates.map(\.remote))
        return peers.count == 1 ? peers.first : nil
    }
}
