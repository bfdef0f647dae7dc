#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Process hardening done first thing: no core dumps (RLIMIT_CORE 0) and not dumpable (PR_SET_DUMPABLE 0,
/// which also keeps same-user debuggers from attaching), so a crash while a secret is held writes it nowhere.
public enum Hardening {
    public static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = vaultctl_set_dumpable(0)
    }

    /// Opens `/dev/null` on any of descriptors 0, 1 and 2 that is closed (`vaultctl read s <&-`), as
    /// setuid programs do. Otherwise the first file vaultctl opens would become standard input or output:
    /// a password line read from a lock file, a secret written into one. Done before anything is opened.
    public static func ensureStandardDescriptors() {
        vaultctl_ensure_standard_descriptors()  // CSystem's gate_start.h: vaultctl's constructor does it too
    }

    /// Whether core dumps are off for this process (for tests and `--version`-style diagnostics).
    public static var coreDumpsOff: Bool {
        var current = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &current) == 0 && current.rlim_cur == 0 && vaultctl_get_dumpable() == 0
    }
}
