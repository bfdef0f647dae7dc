/// The few fields of `/proc/<pid>/stat` the origin probe needs.
///
/// The line is "pid (comm) state ppid pgrp session tty_nr …"; `comm` is up to 15 bytes the process chose
/// itself, and may hold spaces, parentheses and bytes that are not UTF-8, so the fields after it are
/// found from the *last* ")" of the line, working on bytes.
struct ProcStat: Equatable, Sendable {
    var pid: Int32
    var comm: String
    var ppid: Int32
    var session: Int32
    /// The controlling terminal's device number in the kernel's encoding (0: none).
    var ttyNr: Int64

    static func parse(_ line: String) -> ProcStat? { parse(Array(line.utf8)) }

    static func parse(_ bytes: [UInt8]) -> ProcStat? {
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")), open < close,
              open >= 2, bytes[open - 1] == UInt8(ascii: " ") else { return nil }
        let number = { (slice: ArraySlice<UInt8>) -> Int64? in
            var s = slice
            let negative = s.first == UInt8(ascii: "-")
            if negative { s = s.dropFirst() }
            guard (1...19).contains(s.count), s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            var v: Int64 = 0
            for d in s { v = v * 10 + Int64(d - 0x30) }
            return negative ? -v : v
        }
        let rest = bytes[(close + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        // rest: state ppid pgrp session tty_nr …
        guard rest.count >= 5, rest[0].count == 1,
              let pid = number(bytes[..<(open - 1)]), let pidValue = Int32(exactly: pid), pidValue > 0,
              let ppid = number(rest[1]).flatMap({ Int32(exactly: $0) }), ppid >= 0,
              let session = number(rest[3]).flatMap({ Int32(exactly: $0) }),
              let tty = number(rest[4]) else { return nil }
        let comm = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
        return ProcStat(pid: pidValue, comm: comm, ppid: ppid, session: session, ttyNr: tty)
    }

    /// `/proc/<pid>/stat`, or nil if it cannot be read (the process is gone, or hidden by `hidepid`).
    static func read(pid: Int32) -> ProcStat? {
        ProcFile.read("/proc/\(pid)/stat", limit: 4096).flatMap { parse($0) }
    }

    /// The chain of parents from `start` upwards, `start` first, through pid 1 if it is visible.
    ///
    /// Stops at pid 1, at a parent of 0 (the top of a pid namespace), at an unreadable entry, at a loop
    /// (pids are reused, so a chain read while processes come and go might cycle), or after `maxSteps`.
    static func ancestry(from start: Int32, maxSteps: Int = 64,
                         read: (Int32) -> ProcStat? = { ProcStat.read(pid: $0) }) -> [ProcStat] {
        var chain: [ProcStat] = []
        var seen: Set<Int32> = []
        var pid = start
        while chain.count < maxSteps, pid > 0, seen.insert(pid).inserted, let stat = read(pid) {
            chain.append(stat)
            if pid == 1 { break }
            pid = stat.ppid
        }
        return chain
    }

    /// Whether a process name is an SSH server whose sessions run as its descendants: OpenSSH's `sshd`
    /// and its helpers (`sshd-session`, `sshd-auth`), Dropbear, and Tailscale's built-in SSH server
    /// (`tailscaled`, which nothing local descends from).
    static func isSSHServer(_ comm: String) -> Bool {
        comm.hasPrefix("sshd") || comm == "dropbear" || comm == "tailscaled"
    }

    /// Whether this process's own sockets carry the session, so its peer is worth reading. Not so for
    /// `tailscaled`: its SSH runs over its own user-space TCP, and its kernel sockets go elsewhere.
    static func holdsSessionSocket(_ comm: String) -> Bool {
        comm.hasPrefix("sshd") || comm == "dropbear"
    }
}
