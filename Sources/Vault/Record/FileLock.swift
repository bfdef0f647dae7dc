#if canImport(Glibc)
import Glibc
#endif
import Slots

/// An exclusive advisory lock (`flock`) on a private lock file, held until `release()`.
final class FileLock {
    private var fd: Int32

    init(path: String) throws(SlotError) {
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path, errno: errno, operation: "open the lock file") }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            fd = -1
            throw .io(path: path, errno: e, operation: "lock")
        }
    }

    private init(descriptor: Int32) {
        fd = descriptor
    }

    /// What `shared(ifPresent:waitingAtMost:)` got.
    enum Shared {
        case held(FileLock)
        /// No lock file: no change has ever taken the lock, so none is in progress.
        case absent
        /// A change held the lock all the time we were willing to wait.
        case timedOut
    }

    /// A shared lock on an existing lock file, held until `release()`. Opened read-only and never created, so
    /// a reader writes nothing; waits at most `seconds` for a change that holds it (a stopped or hung
    /// `store` must not hang every read).
    static func shared(ifPresent path: String, waitingAtMost seconds: Double) throws(SlotError) -> Shared {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return .absent }
            throw .io(path: path, errno: errno, operation: "open the lock file")
        }
        let deadline = Deadline(secondsFromNow: seconds)
        var pause: UInt32 = 1000
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR else {
                close(fd)
                throw .io(path: path, errno: e, operation: "lock")
            }
            if deadline.remainingMilliseconds == 0 {
                close(fd)
                return .timedOut
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        return .held(FileLock(descriptor: fd))
    }

    func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
