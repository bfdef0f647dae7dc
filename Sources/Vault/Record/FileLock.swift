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

    /// A shared lock on an existing lock file, held until `release()`; nil when the file is not there (no
    /// change has ever taken the lock, so none is in progress). Opened read-only and never created, so a
    /// reader writes nothing.
    static func shared(ifPresent path: String) throws(SlotError) -> FileLock? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .io(path: path, errno: errno, operation: "open the lock file")
        }
        while flock(fd, LOCK_SH) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            throw .io(path: path, errno: e, operation: "lock")
        }
        return FileLock(descriptor: fd)
    }

    func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
