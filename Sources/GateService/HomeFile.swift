#if canImport(Glibc)
import Glibc
#endif

/// A small file under a home, read by the gate without following any symbolic link on the way: each folder
/// is opened from the one before with `O_NOFOLLOW`, so no link the user made can lead the gate (which holds
/// the store's group) into the store. Only a regular file of `uid`'s, 4 KiB at most, is read.
enum HomeFile {
    /// What was found at the path.
    enum Found: Equatable {
        case bytes([UInt8])
        /// No such file (a folder on the way missing too).
        case missing
        /// Something that is not such a file: a link on the way, a folder, another user's file, too large.
        case other(String)
        /// The home or a folder in it could not be read now (not mounted, no permission, an I/O error).
        case unreadable(String)
    }

    static func read(home: String, components: [String], uid: uid_t) -> Found {
        var fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return .unreadable("the home folder: \(String(cString: strerror(errno)))") }
        for (i, name) in components.enumerated() {
            let last = i == components.count - 1
            let next = openat(fd, name, (last ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC)
            let e = errno
            close(fd)
            guard next >= 0 else {
                switch e {
                case ENOENT: return .missing
                case ELOOP: return .other("'\(name)' is a symbolic link")
                case ENOTDIR: return .other("'\(name)' is not a folder (a link is not followed)")
                default: return .unreadable("'\(name)': \(String(cString: strerror(e)))")
                }
            }
            fd = next
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .unreadable(String(cString: strerror(errno))) }
        guard st.st_mode & S_IFMT == S_IFREG else { return .other("it is not a regular file") }
        guard st.st_uid == uid else { return .other("it is owned by uid \(st.st_uid)") }
        guard st.st_size <= 4096 else { return .other("it is larger than 4 KiB") }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var used = 0
        while used < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, $0.count - used) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .unreadable(String(cString: strerror(errno))) }
            guard n > 0 else { break }
            used += n
        }
        return .bytes(Array(bytes[0..<used]))
    }
}
