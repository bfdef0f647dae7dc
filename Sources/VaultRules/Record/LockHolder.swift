#if canImport(Glibc)
import Glibc
#endif

/// The process that holds a lock we waited for in vain, as `/proc/locks` names it, for the message that
/// says who to wait for or stop.
///
/// `/proc/locks` lists each lock as `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF` (device numbers in
/// hex; lines with `->` are waiters, not holders). For `flock` the PID is the process that took the lock.
public struct LockHolder: Sendable, Equatable {
    public let pid: Int32
    /// The holder's command name (`/proc/PID/comm`), when readable.
    public let command: String?

    /// The holder of the lock on the file open at `fd`; nil when it cannot be told.
    static func of(_ fd: Int32) -> LockHolder? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let dev = UInt64(st.st_dev)
        // glibc's gnu_dev_major / gnu_dev_minor, which are macros Swift does not import.
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let inode = UInt64(st.st_ino)
        var found: Int32?
        _ = ProcFile.forEachLine("/proc/locks", limit: 4 * 1024 * 1024) { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard !fields.contains("->"), fields.count >= 6 else { return true }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, UInt64(id[0], radix: 16) == major, UInt64(id[1], radix: 16) == minor,
                  UInt64(id[2]) == inode, let pid = Int32(fields[4]), pid != getpid() else { return true }
            found = pid
            return false
        }
        guard let pid = found else { return nil }
        var command = ProcFile.read("/proc/\(pid)/comm", limit: 64).map { String(decoding: $0, as: UTF8.self) }
        if command?.last == "\n" { command?.removeLast() }
        return LockHolder(pid: pid, command: command?.isEmpty == true ? nil : command)
    }
}
