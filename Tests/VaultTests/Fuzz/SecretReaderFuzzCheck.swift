#if canImport(Glibc)
import Glibc
#endif
import Slots
@testable import Vault  // Spawn.pipe: close-on-exec from the start, as the code under test uses

/// The oracle of the `secret-reader` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a
/// symlink) and the corpus replay test: the input bytes are what an askpass program or a pipe on stdin sends,
/// read by `SecretReader.read` with the password limit (4096) and with a small limit taken from the first
/// byte (0...63), each with and without `stopAtNewline`.
///
/// The answer is exact: all the bytes (or, stopping at a newline, those before the first `\n`, which is
/// dropped) when they fit the limit, otherwise `.tooLong`; never more than `limit` bytes, never a kept
/// newline; and the reader takes from the pipe no byte past the newline (or past `limit + 1` bytes), so what
/// follows is left for the caller.
enum SecretReaderFuzzCheck {
    /// Most bytes one pipe holds without a reader (the Linux default capacity).
    static let pipeCapacity = 65536

    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        let small = Int(input.first ?? 0) % 64
        for limit in [PasswordSource.limit, small] {
            for stop in [false, true] {
                if let problem = run(input, limit: limit, stopAtNewline: stop) {
                    return "limit \(limit), stopAtNewline \(stop): \(problem)"
                }
            }
        }
        return nil
    }

    static func run(_ input: UnsafeRawBufferPointer, limit: Int, stopAtNewline: Bool) -> String? {
        guard let ends = Spawn.pipe() else { return nil }  // out of descriptors: not the reader's fault
        let fds = [ends.read, ends.write]
        defer { close(fds[0]) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        var sentCount = 0
        while sentCount < min(input.count, pipeCapacity) {
            let n = write(fds[1], input.baseAddress! + sentCount, min(input.count, pipeCapacity) - sentCount)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            sentCount += n
        }
        close(fds[1])
        let sent = Array(input.prefix(sentCount))

        let outcome = SecretReader.read(fd: fds[0], limit: limit, stopAtNewline: stopAtNewline)
        let rest = drain(fds[0])
        let newline = stopAtNewline ? sent.firstIndex(of: 0x0A) : nil
        let answerCount = newline ?? sent.count
        switch outcome {
        case .failed(let e):
            return "read failed with errno \(e)"
        case .tooLong:
            guard answerCount > limit else { return "tooLong for an answer of \(answerCount) bytes" }
            guard rest.count == sent.count - (limit + 1) else {
                return "after tooLong it left \(rest.count) of \(sent.count) bytes, not all but limit + 1"
            }
        case .bytes(let secret):
            let got = secret.withUnsafeBytes { Array($0) }
            if got.count > limit { return "kept \(got.count) bytes, over the limit" }
            guard answerCount <= limit else { return "kept \(got.count) bytes of a \(answerCount)-byte answer instead of tooLong" }
            if stopAtNewline && got.contains(0x0A) { return "kept a newline" }
            guard got == Array(sent.prefix(answerCount)) else { return "the answer differs from the bytes sent" }
            let consumed = newline.map { $0 + 1 } ?? sent.count
            guard rest == Array(sent.dropFirst(consumed)) else {
                return "left \(rest.count) bytes in the pipe, not the \(sent.count - consumed) after the answer"
            }
        }
        return nil
    }

    /// Everything still in the pipe.
    static func drain(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return out }
            out += chunk[0..<n]
        }
    }
}
