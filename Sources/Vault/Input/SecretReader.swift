#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Reads secret bytes from a file descriptor straight into a `SecretBytes`, never through `String` or `Data`.
public enum SecretReader {
    public enum Outcome {
        case bytes(SecretBytes)
        /// More than `limit` bytes arrived.
        case tooLong
        case failed(Int32)
    }

    /// Reads until EOF (or, with `stopAtNewline`, the first `\n`, which is dropped), keeping at most `limit` bytes.
    public static func read(fd: Int32, limit: Int, stopAtNewline: Bool = false) -> Outcome {
        let buffer = SecretBytes(capacity: limit + 1)
        var failure: Int32 = 0
        buffer.withUnsafeMutableBytes { raw, used in
            while used < raw.count {
                let want = stopAtNewline ? 1 : raw.count - used
                let n = Glibc.read(fd, raw.baseAddress! + used, want)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }
                if stopAtNewline && raw[used] == 0x0A {
                    raw[used] = 0
                    return
                }
                used += n
            }
        }
        if failure != 0 { return .failed(failure) }
        if buffer.count > limit { return .tooLong }
        return .bytes(buffer)
    }
}
