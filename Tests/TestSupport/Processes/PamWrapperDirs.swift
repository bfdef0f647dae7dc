#if canImport(Glibc)
import Glibc
#endif

/// pam_wrapper gives each process it is preloaded into a folder `/tmp/pam.N`, from a small fixed set, and
/// removes a stale one only when the `pid` file inside names a dead process. A process killed before it
/// wrote that file (the crash tests kill at random moments) leaves a folder pam_wrapper can never reclaim,
/// and once the set is used up `pam_start` fails for every later process. This sweeps such folders: an
/// empty or missing pid file older than a quarter second (a live process writes it right after the mkdir), or
/// a pid that is no longer running.
public enum PamWrapperDirs {
    /// The name in a `readdir` entry, read in place (copying the whole `dirent` can read past its end).
    public static func direntName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }

    /// vaultctl's words when `pam_start` itself failed (exit 78), which under pam_wrapper means the
    /// wrapper could not set up its folder, not that PAM said no.
    public static func isWrapperStartFailure(_ status: Int32, _ stderr: String) -> Bool {
        if status == 78 && stderr.contains("PAM could not start") { return true }
        // pam_wrapper's constructor calls exit(1) when it loses the race for a folder, printing only its own
        // PWRAP_ lines: vaultctl never ran.
        if status == 1 && stderr.contains("PWRAP_") && !stderr.contains("vaultctl:") { return true }
        return false
    }

    /// Runs `run` again (at most 4 times in all) while it failed only because pam_wrapper could not start
    /// PAM (`isWrapperStartFailure` of the status and stderr `ended` gives; nil: it did not end by itself),
    /// sweeping stale folders before each new try. pam_wrapper (the test tool, not the product) now and then
    /// fails pam_start under heavy parallel load when it juggles its /tmp/pam.X folders; that is not a result
    /// worth asserting on. A wrong password or any other PAM answer is never retried.
    public static func retryingStartFailures<R>(_ run: () -> R, ended: (R) -> (status: Int32, stderr: String)?) -> R {
        var result = run()
        var tries = 1
        while tries < 4, let end = ended(result), isWrapperStartFailure(end.status, end.stderr) {
            print("pam_wrapper could not start PAM, running again: \(end.stderr)")  // visible in the test log
            sweepStale()
            result = run()
            tries += 1
        }
        return result
    }

    /// `text` without pam_wrapper's own lines (starting `PWRAP_`): not the words of the program under test.
    public static func droppingNoise(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("PWRAP_") }
            .joined(separator: "\n")
    }

    public static func sweepStale() {
        lock.lock()
        defer { lock.unlock() }
        guard let dir = opendir("/tmp") else { return }
        var stale: [String] = []
        while let entry = readdir(dir) {
            let name = direntName(entry)
            guard name.hasPrefix("pam."), name.count == 5 else { continue }
            let path = "/tmp/\(name)"
            if isStale(path) { stale.append(path) }
        }
        closedir(dir)
        for path in stale {
            if let d = opendir(path) {
                while let entry = readdir(d) {
                    let file = direntName(entry)
                    if file != "." && file != ".." { unlink("\(path)/\(file)") }
                }
                closedir(d)
            }
            rmdir(path)
        }
    }

    private static let lock = NSLockLike()

    private static func isStale(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return false }
        let fd = open("\(path)/pid", O_RDONLY | O_CLOEXEC)
        var text = ""
        if fd >= 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = read(fd, &buffer, buffer.count)
            close(fd)
            if n > 0 { text = String(decoding: buffer[..<n], as: UTF8.self).filter(\.isNumber) }
        }
        if let pid = Int32(text) {
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let age = Double(now.tv_sec - st.st_mtim.tv_sec) + Double(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9
        return age > 0.25
    }
}

/// A tiny mutex (pthread) usable from any test thread.
final class NSLockLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
