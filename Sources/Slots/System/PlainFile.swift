#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads small public files (machine-id, /proc entries) that are not ours to check for privacy.
package enum PlainFile {
    package static func read(_ path: String, maximumCount: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out = [UInt8](repeating: 0, count: maximumCount)
        var used = 0
        while used < maximumCount {
            let n = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, maximumCount - used) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            used += n
        }
        return Array(out[..<used])
    }
}
