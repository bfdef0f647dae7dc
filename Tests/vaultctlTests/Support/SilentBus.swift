#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket that takes connections and never says a word: a bus that hangs. Connections wait in the
/// listen backlog, so whatever a client sends is accepted by the kernel and never answered.
final class SilentBus {
    let path: String
    private let fd: Int32

    init() throws {
        (path, fd) = try UnixListener.make("silent")
    }

    var address: String { "unix:path=\(path)" }

    deinit {
        close(fd)
        unlink(path)
    }
}
