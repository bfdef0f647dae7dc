#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket that takes connections and never says a word: a bus that hangs. Connections wait in the
/// listen backlog, so whatever a client sends is accepted by the kernel and never answered.
final class SilentBus {
    let path: String
    private let fd: Int32

    init() throws {
        let folder = try Fixtures.makeFolder("silent")
        path = "\(folder)/bus"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            throw SetupError(description: "could not listen on \(path): errno \(errno)")
        }
    }

    var address: String { "unix:path=\(path)" }

    deinit {
        close(fd)
        unlink(path)
    }
}
