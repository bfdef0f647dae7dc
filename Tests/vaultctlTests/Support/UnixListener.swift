#if canImport(Glibc)
import Glibc
#endif

/// A listening Unix socket at a new path under the suite's root, for buses the tests play themselves.
enum UnixListener {
    /// The socket's path and descriptor; connections wait in a backlog of `backlog`.
    static func make(_ hint: String, backlog: Int32 = 64) throws -> (path: String, fd: Int32) {
        let path = "\(try Fixtures.makeFolder(hint))/bus"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, backlog) == 0 else {
            close(fd)
            throw SetupError(description: "could not listen on \(path): errno \(errno)")
        }
        return (path, fd)
    }
}
