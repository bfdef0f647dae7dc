#if canImport(Glibc)
import Glibc
#endif
import Slots

/// An advisory lock (`flock`) on a private lock file, held until `release()`; every wait for it is bounded.
///
/// A lock file is checked like every file of vaultctl's (a regular file, ours, 0600, not a symlink; its
/// folder private): anything else is refused with `unsafePermissions` (78) and never locked. A lock that
/// another process holds for longer than the wait is `lockHeld` (75), naming that process.
public final class FileLock {
    private var fd: Int32

    /// How long a file's own lock (`.modes.lock`, `.ratelimit.json.lock`, `.supply.json.lock`,
    /// `.audit.lock`) is waited for: they are held only for a read-modify-write of one small file.
    public static let fileWait: Double = 5

    private init(descriptor: Int32) {
        fd = descriptor
    }

    /// An exclusive lock on `path` (created 0600 when missing, in a private folder that must exist), waiting
    /// at most `seconds` for another holder; 0 tries once.
    public convenience init(path: String, waitingAtMost seconds: Double = FileLock.fileWait) throws(VaultError) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw Self.openFailure(path, errno) }
        try Self.lock(fd, path, LOCK_EX, waitingAtMost: seconds)
        self.init(descriptor: fd)
    }

    /// A shared lock on an existing lock file, held until `release()`; nil when there is no lock file (no
    /// change ever took the lock, so none is in progress). Opened read-only and never created, so a reader
    /// writes nothing; waits at most `seconds` for a change that holds it (a stopped or hung `store` must
    /// not hang every read).
    package static func shared(ifPresent path: String, waitingAtMost seconds: Double) throws(VaultError) -> FileLock? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 {
            let e = errno
            if e == ENOENT {
                // No lock file, or no folder: a folder that is not one (a file in its place) is refused.
                do { _ = try SecureFile.privateFolderExists(SecureFile.parent(of: path)) } catch { throw .slot(error) }
                return nil
            }
            throw openFailure(path, e)
        }
        try lock(fd, path, LOCK_SH, waitingAtMost: seconds)
        return FileLock(descriptor: fd)
    }

    /// Checks the open lock file, then takes the lock, waiting until `seconds` have passed. Closes `fd` on
    /// any failure.
    ///
    /// The wait is a blocking `flock` (the kernel wakes a waiter when the lock is released, so parallel
    /// stores take turns instead of a poller losing every race), interrupted every 100 ms by SIGALRM from an
    /// interval timer to look at the deadline.
    private static func lock(_ fd: Int32, _ path: String, _ operation: Int32, waitingAtMost seconds: Double) throws(VaultError) {
        do { try SecureFile.checkPrivate(descriptor: fd, path: path) } catch {
            close(fd)
            throw .slot(error)
        }
        if flock(fd, operation | LOCK_NB) == 0 { return }
        guard errno == EWOULDBLOCK || errno == EINTR else {
            let e = errno
            close(fd)
            throw .slot(.io(path: path, errno: e, operation: "lock"))
        }
        if seconds <= 0 {
            let holder = LockHolder.of(fd)
            close(fd)
            throw .lockHeld(path: path, holder: holder, seconds: 0)
        }
        let deadline = Deadline(secondsFromNow: seconds)
        let timer = AlarmTicks(milliseconds: 100)
        defer { timer.stop() }
        while deadline.remainingMilliseconds > 0 {
            if flock(fd, operation) == 0 { return }
            guard errno == EINTR else {
                let e = errno
                close(fd)
                throw .slot(.io(path: path, errno: e, operation: "lock"))
            }
        }
        if flock(fd, operation | LOCK_NB) == 0 { return }
        let holder = LockHolder.of(fd)
        close(fd)
        throw .lockHeld(path: path, holder: holder, seconds: Int(seconds.rounded(.up)))
    }

    /// What a failed `open` of a lock file means: a symlink or a folder in its place is an unsafe file (78);
    /// a missing or non-folder parent is checked as a folder (78 when it is not one).
    private static func openFailure(_ path: String, _ e: Int32) -> VaultError {
        switch e {
        case ELOOP: return .slot(.unsafePermissions(path: path, detail: "it is a symbolic link"))
        case EISDIR: return .slot(.unsafePermissions(path: path, detail: "it is not a regular file"))
        case ENOTDIR, ENOENT:
            do { _ = try SecureFile.privateFolderExists(SecureFile.parent(of: path)) } catch { return .slot(error) }
            return .slot(.io(path: path, errno: e, operation: "open the lock file"))
        default: return .slot(.io(path: path, errno: e, operation: "open the lock file"))
        }
    }

    /// SIGALRM every few milliseconds (`setitimer`), with a handler that does nothing and no SA_RESTART, so
    /// a blocking call returns EINTR; SIGALRM is unblocked for this thread meanwhile (a parent may have
    /// blocked it, and the mask survives exec). `stop()` puts back the timer, the handler and the mask.
    private struct AlarmTicks {
        var savedAction = sigaction()
        var savedTimer = itimerval()
        var savedMask = sigset_t()

        init(milliseconds: Int) {
            var alarm = sigset_t()
            sigemptyset(&alarm)
            sigaddset(&alarm, SIGALRM)
            pthread_sigmask(SIG_UNBLOCK, &alarm, &savedMask)
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(SIGALRM, &action, &savedAction)
            let tick = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
            var timer = itimerval(it_interval: tick, it_value: tick)
            setitimer(Int32(ITIMER_REAL.rawValue), &timer, &savedTimer)
        }

        func stop() {
            var timer = savedTimer
            setitimer(Int32(ITIMER_REAL.rawValue), &timer, nil)
            var action = savedAction
            sigaction(SIGALRM, &action, nil)
            var mask = savedMask
            pthread_sigmask(SIG_SETMASK, &mask, nil)
        }
    }

    public func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
