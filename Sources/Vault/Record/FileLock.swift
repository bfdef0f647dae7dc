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

    func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
