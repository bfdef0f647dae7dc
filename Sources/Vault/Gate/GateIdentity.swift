#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

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
        var found: gid_t?
        ProcFile.forEachLine("/proc/\(pid)/status", limit: 8192) { line in
            guard line.hasPrefix("Gid:") else { return true }
            let fields = line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " })
            found = fields.count > field ? UInt32(fields[field]).map { gid_t($0) } : nil
            return false
        }
        return found
    }
}
