#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Reads secret bytes from a file descriptor straight into a `SecretBytes`, never through `String` or `Data`.
public enum SecretReader {
    public enum Outcome {
        case bytes(SecretBytes)
        /// More than `limit` bytes arrived.
        case tooLong
        case failed(Int32)
    }

    /// Reads until EOF (or, with `stopAtNewline`, the first `\n`, which is dropped), keeping at most `limit` bytes.
    /// With a `deadline`, each read first waits (`poll`) only for the time left: past it, `failed(ETIMEDOUT)`.
    public static func read(fd: Int32, limit: Int, stopAtNewline: Bool = false, deadline: Deadline? = nil) -> Outcome {
        read(fd: fd, limit: limit, stopAtNewline: stopAtNewline, deadline: deadline).outcome
    }

    /// What one line of a stream gave: a line, or the end of the stream before any byte of one.
    public enum Line {
        case line(SecretBytes)
        case endOfInput
        case tooLong
        case failed(Int32)
    }

    /// Reads one line (up to and dropping `\n`; a last line may lack it). Bytes are read one at a time, so
    /// nothing after the newline is consumed and the next call reads the next line.
    public static func readLine(fd: Int32, limit: Int) -> Line {
        let (outcome, sawAnything) = read(fd: fd, limit: limit, stopAtNewline: true, deadline: nil)
        switch outcome {
        case .bytes where !sawAnything: return .endOfInput
        case .bytes(let s): return .line(s)
        case .tooLong: return .tooLong
        case .failed(let e): return .failed(e)
        }
    }

    private static func read(fd: Int32, limit: Int, stopAtNewline: Bool, deadline: Deadline?) -> (outcome: Outcome, sawAnything: Bool) {
        let buffer = SecretBytes(capacity: limit + 1)
        var failure: Int32 = 0
        var sawNewline = false
        buffer.withUnsafeMutableBytes { raw, used in
            while used < raw.count {
                let want = stopAtNewline ? 1 : raw.count - used
                if let deadline {
                    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&p, 1, deadline.remainingMilliseconds)
                    if ready < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if ready == 0 {
                        failure = ETIMEDOUT
                        return
                    }
                }
                let n = Glibc.read(fd, raw.baseAddress! + used, want)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }
                if stopAtNewline && raw[used] == 0x0A {
                    raw[used] = 0
                    sawNewline = true
                    return
                }
                used += n
            }
        }
        let sawAnything = sawNewline || buffer.count > 0
        if failure != 0 { return (.failed(failure), sawAnything) }
        if buffer.count > limit { return (.tooLong, sawAnything) }
        return (.bytes(buffer), sawAnything)
    }
}
