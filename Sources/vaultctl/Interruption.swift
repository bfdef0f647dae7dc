#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import GateProtocol
import Vault
import VaultRules

/// Ctrl-C (SIGINT): the terminal's echo back, "vaultctl: cancelled." on standard error and, for an audited
/// command whose own line is not written yet, a `cancelled` line in the audit log; then the signal's own end
/// (the shell sees 130, and a script's loop stops as it should).
///
/// Everything the handler does is async-signal-safe: the line is made before the command runs, with a
/// placeholder time that the handler fills in from `clock_gettime` by arithmetic alone, and is appended with
/// one `write` to the log opened `O_APPEND` (a line is whole or not there, as the log's own appends are).
/// Changes themselves are safe to cut at any point (each is ordered so that a kill leaves a readable value);
/// the line only says that the command was cut.
enum Interruption {
    nonisolated(unsafe) private static var line: UnsafeMutablePointer<UInt8>?
    nonisolated(unsafe) private static var lineCount = 0
    /// Where the 20 placeholder characters of the time are in `line`.
    nonisolated(unsafe) private static var timeOffset = 0
    nonisolated(unsafe) private static var logPath: UnsafeMutablePointer<CChar>?
    /// 1 while the command's own line is not written: read by the handler, which may run on any thread.
    private static let auditPending = Atomic<Int32>(0)
    /// Whether the handler is in place (SIGINT was not ignored when vaultctl started).
    nonisolated(unsafe) private static var installed = false
    static let placeholderTime = "0000-00-00T00:00:00Z"
    private static let message: StaticString = "\nvaultctl: cancelled.\n"

    /// Installs the handler; `auditLine` (its time `placeholderTime`) and `logPath` for an audited command.
    /// A SIGINT that vaultctl was started with ignored (a background job of a script) stays ignored.
    static func install(auditLine: [UInt8]?, logPath path: String?) {
        // Every static the handler reads is set here, before it can run (none is first touched in it).
        line = nil; logPath = nil; lineCount = 0; timeOffset = 0
        auditPending.store(0, ordering: .sequentiallyConsistent)
        _ = message.utf8CodeUnitCount
        // From now on a prompt leaves SIGINT as it is here: this handler, or ignored.
        EchoRestore.leaveSIGINTToCaller()
        if SignalDisposition.isIgnored(SIGINT) { return }
        if let auditLine, let path, let at = offset(of: Array(placeholderTime.utf8), in: auditLine) {
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: auditLine.count)
            copy.initialize(from: auditLine, count: auditLine.count)
            line = copy
            lineCount = auditLine.count
            timeOffset = at
            logPath = strdup(path)
            auditPending.store(1, ordering: .sequentiallyConsistent)
        }
        EchoRestore.restoreNow()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in
            EchoRestore.restoreNow()
            if Interruption.auditPending.exchange(0, ordering: .sequentiallyConsistent) != 0,
               let line = Interruption.line, let path = Interruption.logPath {
                Interruption.writeTime(into: line + Interruption.timeOffset)
                // As the log's own appends: never through a link, never blocking (a FIFO in its place), only
                // into a regular file of this user's that nobody else can read.
                let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
                if fd >= 0 {
                    var st = stat()
                    if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 {
                        _ = write(fd, line, Interruption.lineCount)
                    }
                    close(fd)
                }
            }
            // The words last, and only if standard error takes them now (a pipe nobody reads must not hold
            // the process: SIGINT is masked while this runs, so a second Ctrl-C could not end it).
            var out = pollfd(fd: 2, events: Int16(POLLOUT), revents: 0)
            if poll(&out, 1, 0) == 1, out.revents & Int16(POLLOUT) != 0 {
                let flags = fcntl(2, F_GETFL)
                if flags >= 0 { _ = fcntl(2, F_SETFL, flags | O_NONBLOCK) }
                Interruption.message.withUTF8Buffer { _ = write(2, $0.baseAddress, $0.count) }
                if flags >= 0 { _ = fcntl(2, F_SETFL, flags) }
            }
            signal(sig, SIG_DFL)
            raise(sig)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        installed = true
    }

    /// Runs `write` (the command's own audit line) with SIGINT held back; once it is written, a Ctrl-C no
    /// longer says "cancelled" (what the line says stands) and ends the process the default way.
    static func writingOwnLine<T, E: Error>(_ write: () throws(E) -> T) throws(E) -> T {
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        var saved = sigset_t()
        pthread_sigmask(SIG_BLOCK, &interrupt, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        let result = try write()
        auditPending.store(0, ordering: .sequentiallyConsistent)
        if installed {
            signal(SIGINT, SIG_DFL)
            installed = false
        }
        return result
    }

    /// Ctrl-C ends the process the default way again (the command is done).
    static func uninstall() {
        auditPending.store(0, ordering: .sequentiallyConsistent)
        if installed {
            signal(SIGINT, SIG_DFL)
            installed = false
        }
    }

    /// "YYYY-MM-DDTHH:MM:SSZ" (UTC) for now, written over 20 bytes at `p`; arithmetic only (days to a civil
    /// date as in Howard Hinnant's `civil_from_days`), so it may run in a signal handler.
    static func writeTime(into p: UnsafeMutablePointer<UInt8>) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        writeTime(Int64(now.tv_sec), into: p)
    }

    static func writeTime(_ seconds: Int64, into p: UnsafeMutablePointer<UInt8>) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        put(year, 4, at: 0, p); p[4] = 45
        put(month, 2, at: 5, p); p[7] = 45
        put(day, 2, at: 8, p); p[10] = 84
        put(secondOfDay / 3_600, 2, at: 11, p); p[13] = 58
        put(secondOfDay % 3_600 / 60, 2, at: 14, p); p[16] = 58
        put(secondOfDay % 60, 2, at: 17, p); p[19] = 90
    }

    /// `value` in `width` decimal digits at `p + start`.
    private static func put(_ value: Int64, _ width: Int, at start: Int, _ p: UnsafeMutablePointer<UInt8>) {
        var v = value
        var i = start + width - 1
        while i >= start {
            p[i] = UInt8(48 + v % 10)
            v /= 10
            i -= 1
        }
    }


    /// Where `needle` last starts in `haystack`.
    private static func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in stride(from: haystack.count - needle.count, through: 0, by: -1)
            where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
