#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Whether the process that says hello is vaultctl-gate running set-group-ID, as the kernel started it: its
/// saved set-group-ID (`/proc/PID/status`) is the group of the gate's file, which is set-group-ID. The saved
/// one, not the effective one: the gate lowers its effective group to yours for a moment to look at a file
/// as you (seen once in a loaded run, a look in that moment refused a real gate), while a process that never
/// had the group cannot set either to it. When the
/// kernel does not raise the group (vaultctl under no_new_privs, a nosuid mount, a tracer, a security module),
/// the gate is an ordinary process of yours, dumpable: another program running as you could take its pipes
/// and speak for it (ask for your password, say anything). The gate refuses to run then, but only once it
/// runs; so vaultctl believes no frame but a refusal before this holds.
enum GateIdentity {
    /// nil when `pid` runs the gate at `path` set-group-ID; otherwise why not, in words.
    static func notSetGroupID(pid: pid_t, path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return "\(path) cannot be looked at (\(String(cString: strerror(errno))))" }
        guard st.st_mode & S_ISGID != 0 else { return "\(path) is not set-group-ID" }
        guard let sgid = savedGroup(of: pid) else { return "its process (pid \(pid)) cannot be looked at" }
        guard sgid == st.st_gid && sgid != getegid() else {
            return "it runs with your own group, not set-group-ID (the kernel did not raise it: no_new_privs, a nosuid mount, a tracer or a security module)"
        }
        return nil
    }

    /// The effective group id of `pid` (the second number of `Gid:` in /proc/PID/status).
    static func effectiveGroup(of pid: pid_t) -> gid_t? { group(of: pid, field: 1) }

    /// The saved set-group-ID of `pid` (the third number of `Gid:`).
    static func savedGroup(of pid: pid_t) -> gid_t? { group(of: pid, field: 2) }

    private static func group(of pid: pid_t, field: Int) -> gid_t? {
        let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        for line in bytes[..<count].split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Gid:".utf8)) {
            let fields = line.dropFirst(4).split(whereSeparator: { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") })
            guard fields.count > field, let value = UInt32(String(decoding: fields[field], as: UTF8.self)) else { return nil }
            return gid_t(value)
        }
        return nil
    }
}
