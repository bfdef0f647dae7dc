#if canImport(Glibc)
import Glibc
#endif
import CSystem
import GateService
import Slots
import GateProtocol
import VaultRules

/// What `vaultctl-gate` does before it trusts anything: it runs set-group-ID `vaultctl` for a caller who
/// controls its environment, descriptors and limits, so it takes none of them as given.
enum StartupChecks {
    /// The variables kept (as polkit's helper keeps them): the language of PAM's messages. PATH is set, not kept.
    static let kept = GateLaunch.gateVariables
    static let path = GateLaunch.gatePATH

    /// The Swift runtime reads `SWIFT_*` variables before `main`, even in a set-group-ID process, and every
    /// other variable is the caller's choice: unless the environment is exactly the clean one (PATH fixed,
    /// the kept language variables), the gate starts again (its own file, through /proc/self/exe) with the
    /// clean one, so not even its image in memory (/proc/PID/environ) holds what the caller set. vaultctl
    /// gives the clean one, so it starts once. `--restarted` marks the second start: it never starts a
    /// third time, unless `SWIFT_*` variables are there (which the clean environment never has).
    static func restartInCleanEnvironment() {
        var current: [String] = []
        var swift = false
        var at = environ
        while let entry = at.pointee {
            if strncmp(entry, "SWIFT_", 6) == 0 { swift = true }
            current.append(String(cString: entry))
            at += 1
        }
        let clean = cleanEnvironment()
        if current.sorted() == clean.sorted() { return }
        let restarted = CommandLine.arguments.dropFirst().contains("--restarted")
        if restarted && !swift { return }  // clearInheritance clears what is left
        let cEnv: [UnsafeMutablePointer<CChar>?] = clean.map { strdup($0) } + [nil]
        // The hint that a request will authenticate goes along (it changes when, never what, the gate does).
        let hint = authenticating ? [strdup(GateLaunch.authenticatingHint)] : []
        let cArgs: [UnsafeMutablePointer<CChar>?] = [strdup("vaultctl-gate"), strdup("--restarted")] + hint + [nil]
        execve("/proc/self/exe", cArgs, cEnv)
        refuse(.slot(.gateUnavailable("it could not start again in a clean environment (\(String(cString: strerror(errno))))")))
    }

    /// Whether vaultctl said its command authenticates as a rule (`GateLaunch.authenticatingHint`).
    static var authenticating: Bool { CommandLine.arguments.dropFirst().contains(GateLaunch.authenticatingHint) }

    /// The only environment the gate runs with: the fixed PATH and the kept language variables it was given.
    static func cleanEnvironment() -> [String] {
        ["PATH=\(path)"] + kept.compactMap { name in getenv(name).map { "\(name)=\(String(cString: $0))" } }
    }

    /// Refuses (69) unless the kernel made this process set-group-ID `vaultctl`: AT_SECURE and the group.
    static func checkPrivilege() {
        let group = getgrnam(GateStore.group)
        guard let group else {
            refuse(.slot(.gateUnavailable("there is no group '\(GateStore.group)', which installing vaultctl adds: \(Installation.current.reinstall)")))
        }
        if vaultctl_at_secure() == 1 && getegid() == group.pointee.gr_gid { return }
        refuse(.slot(.gateUnavailable("it is not running set-group-ID \(GateStore.group) (\(whyNotPrivileged(group.pointee.gr_gid))), so it refuses to run")))
    }

    /// Why the kernel did not raise the group: no_new_privs, a tracer, a nosuid mount, or the file's mode.
    static func whyNotPrivileged(_ gid: gid_t) -> String {
        let status = String(decoding: ProcFile.read("/proc/self/status", limit: 8192) ?? [], as: UTF8.self)
        for line in status.split(separator: "\n") {
            if line.hasPrefix("NoNewPrivs:"), line.hasSuffix("1") { return "no_new_privs is set for it" }
            if line.hasPrefix("TracerPid:"), let pid = Int(line.dropFirst(10).drop(while: { $0 == " " || $0 == "\t" })), pid != 0 {
                return "a tracer (pid \(pid)) is attached"
            }
        }
        var fs = statvfs()
        if statvfs("/proc/self/exe", &fs) == 0, fs.f_flag & UInt(ST_NOSUID) != 0 { return "its file is on a nosuid mount" }
        var st = stat()
        if stat("/proc/self/exe", &st) == 0, st.st_mode & S_ISGID == 0 || st.st_gid != gid {
            return "its file is not set-group-ID \(GateStore.group): mode \(String(st.st_mode & 0o7777, radix: 8)), group \(st.st_gid)"
        }
        return "no_new_privs, a nosuid mount or a tracer"
    }

    /// Clears what the caller handed over: the environment, the umask, descriptors above 2, the working
    /// folder, core dumps, every signal's disposition and the signal mask (both survive an exec: a caller
    /// could ignore SIGCHLD, so that no child's status could be waited for, or block SIGALRM), then ignores
    /// SIGXFSZ (a caller's RLIMIT_FSIZE makes a write fail instead of killing the gate half way), SIGPIPE
    /// (a CLI that went away is a failed write) and the terminal's SIGINT, SIGQUIT and SIGHUP. Its output is made non-blocking, so a caller that stops
    /// reading fails a frame's write within its bound instead of holding the gate (when it is a pipe).
    static func clearInheritance() {
        let clean = cleanEnvironment()
        clearenv()
        for entry in clean { _ = putenv(strdup(entry)) }
        umask(0o077)
        if vaultctl_close_from(3) != 0 {
            for fd in 3..<Int32(1024) { close(fd) }
        }
        _ = chdir("/")
        Hardening.apply()
        for sig in 1..<Int32(65) where sig != SIGKILL && sig != SIGSTOP { signal(sig, SIG_DFL) }
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // The terminal's signals are for vaultctl, which shares its process group: a Ctrl-C at the prompt
        // ends vaultctl, and the gate then finds its pipe closed and gives its place back, uncounted. Killed by
        // one instead, the gate's place would count (it counts if the gate ends before giving it back).
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        // Only a pipe (vaultctl's, which no other process shares): a terminal or file is the caller's too.
        var st = stat()
        let flags = fcntl(1, F_GETFL)
        if fstat(1, &st) == 0, st.st_mode & S_IFMT == S_IFIFO, flags >= 0 { _ = fcntl(1, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Says why on the protocol (a `refused` frame, which vaultctl reports in its own one line), or on
    /// standard error when that frame cannot be written (run by hand, output closed), then exits 69.
    static func refuse(_ error: VaultError) -> Never {
        if !GateFrame(.refused, text: GateRefusal.encode(error)).write(to: 1) || isatty(1) != 0 {
            let text: String
            if case .slot(.gateUnavailable(let m)) = error { text = m } else { text = GateRefusal.encode(error) }
            _ = "vaultctl-gate: \(text)\n".withCString { write(2, $0, strlen($0)) }
        }
        exit(69)
    }
}
