#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Bounded, non-blocking reads of small kernel text files under `/proc`, for the origin probe.
///
/// Every call fails soft: a missing file, a permission error or anything odd gives nil, never a throw.
/// Files are opened `O_NONBLOCK | O_NOCTTY`, so even a path that turned out to be a FIFO or a terminal
/// could not hang or adopt us, and reads stop at `limit` bytes.
public enum ProcFile {
    /// The whole file, or its first `limit` bytes.
    public static func read(_ path: String, limit: Int = 64 * 1024) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = chunks(path, limit: limit) { out.append(contentsOf: $0); return true }
        return ok ? out : nil
    }

    /// Calls `body` with each complete line (without its newline) until it returns false, the file ends
    /// or `limit` bytes were read. False if the file could not be opened or read.
    @discardableResult
    package static func forEachLine(_ path: String, limit: Int, _ body: (Substring) -> Bool) -> Bool {
        var pending: [UInt8] = []
        var going = true
        let ok = chunks(path, limit: limit) { chunk in
            pending.append(contentsOf: chunk)
            var start = 0
            while going, let nl = pending[start...].firstIndex(of: 0x0a) {
                going = body(Substring(String(decoding: pending[start..<nl], as: UTF8.self)))
                start = nl + 1
            }
            pending.removeFirst(start)
            return going
        }
        return ok  // a last piece without a newline is dropped: it may be a line cut off at `limit`
    }

    /// The target of a symbolic link such as `/proc/<pid>/fd/3`, at most 255 bytes.
    static func link(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { readlink(path, $0, b.count) }
        }
        guard n > 0, n < buffer.count else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// The names in a directory such as `/proc/<pid>/fd`, without "." and "..", at most `limit` of them.
    static func names(in path: String, limit: Int) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(dir) {
            let name = direntName(entry)
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    private static func chunks(_ path: String, limit: Int, _ body: (ArraySlice<UInt8>) -> Bool) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: min(limit, 64 * 1024))  // zeroing 64 KiB per /proc file showed in profiles
        var total = 0
        while total < limit {
            let want = min(buffer.count, limit - total)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, want) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { break }
            total += n
            if !body(buffer[..<n]) { break }
        }
        return true
    }
}
