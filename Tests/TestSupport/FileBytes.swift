#if canImport(Glibc)
import Glibc
#endif

/// Small whole-file helpers for test fixtures (never for secrets of the product: those are test data here).
public enum FileText {
    public static func read(_ path: String) -> String? {
        FileBytes.read(path).map { String(decoding: $0, as: UTF8.self) }
    }

    @discardableResult
    public static func write(_ path: String, _ text: String, mode: mode_t = 0o600) -> Bool {
        FileBytes.write(path, Array(text.utf8), mode: mode)
    }
}

public enum FileBytes {
    public static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out += chunk[..<n]
        }
        return out
    }

    /// Replaces the file's contents in place (keeping its inode, owner and mode when it exists).
    @discardableResult
    public static func write(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }
}
