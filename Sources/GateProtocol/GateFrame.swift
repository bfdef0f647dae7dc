#if canImport(Glibc)
import Glibc
#endif
import CSodium
import Slots
import VaultRules

/// The words of the gate protocol (see `GateFrame`), each with the longest payload it may carry.
public enum GateWord: String, Sendable, CaseIterable {
    // The CLI to the gate.
    /// A request (`GateRequest`): what to do, and to which slot.
    case request
    /// The value of a `store`, right after its request.
    case secret
    /// The answer to a prompt.
    case answer
    /// No answer to a prompt (the person cancelled, no way to ask): the payload says why.
    case cancel
    // The gate to the CLI.
    /// The first frame of every exchange: the protocol's version and whether this user's vault is protected.
    case hello
    /// PAM asks with echo off (a password, a PIN); the CLI replies `answer` or `cancel`.
    case promptHidden = "prompt-hidden"
    /// PAM asks with echo on ("press ENTER"); the CLI replies `answer` or `cancel`.
    case promptShown = "prompt-shown"
    /// PAM says something (PAM_TEXT_INFO, PAM_ERROR_MSG): shown as one line, answered with nothing.
    case info, error
    /// The request's result: a read's value, a look's answer, or nothing.
    case ok
    /// The request was refused: `GateRefusal` says why and with which exit code.
    case refused

    /// The longest payload: a secret's 64 KiB for values, 4 KiB for words and messages.
    public var maximumPayload: Int {
        carriesSecret ? SecretBytes.maximumCount : 4096
    }

    /// The words whose payload may be a secret (a store's value, a password, a read's result): read into and
    /// written from `SecretBytes`. The others carry only the protocol's words and messages.
    public var carriesSecret: Bool {
        switch self {
        case .secret, .answer, .ok: return true
        default: return false
        }
    }

    /// The words the CLI may send, and the ones the gate may send.
    public var fromClient: Bool { [.request, .secret, .answer, .cancel].contains(self) }
}

/// One frame of the protocol between `vaultctl` and `vaultctl-gate` on the gate's standard input and
/// output: a header line `WORD LENGTH\n` (a `GateWord`, one space, the payload's length in decimal without
/// leading zeros, at most the word's `maximumPayload`), then exactly LENGTH bytes, which may be anything.
/// Parsing is strict: anything else ends the exchange. The payloads of words that may carry a password or
/// a value live in `SecretBytes`; the others are protocol text.
public struct GateFrame {
    public let word: GateWord
    public let body: GatePayload

    /// A frame whose payload is `payload` itself (no copy).
    public init(_ word: GateWord, _ payload: SecretBytes) {
        self.word = word
        body = .secret(payload)
    }

    /// A frame of protocol text (never a secret: those come as `SecretBytes`).
    public init(_ word: GateWord, text: String) {
        self.word = word
        body = .plain(Array(text.utf8))
    }

    public init(_ word: GateWord, body: GatePayload) {
        self.word = word
        self.body = body
    }

    /// A frame of protocol bytes as read (a word that never carries a secret).
    init(_ word: GateWord, plain: [UInt8]) {
        self.word = word
        body = .plain(plain)
    }

    /// A frame as read: a zeroizing buffer for the words that may carry a secret, plain bytes otherwise.
    package init(_ word: GateWord, reading bytes: UnsafeRawBufferPointer) {
        self.word = word
        body = word.carriesSecret ? .secret(SecretBytes(copying: bytes)) : .plain(Array(bytes))
    }

    /// The payload in a zeroizing buffer: itself for a word that may carry a secret (as read or made). For
    /// protocol text it is a copy (a `sodium_malloc`): read such frames with `text` or `body` instead.
    public var payload: SecretBytes {
        switch body {
        case .secret(let s): return s
        case .plain(let p): return p.withUnsafeBytes { SecretBytes(copying: $0) }
        }
    }

    /// The payload as text (for words that carry text): invalid UTF-8 is repaired, never trusted.
    public var text: String { body.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// The longest header line, newline excluded: the longest word, a space, six digits.
    public static let maximumHeader = 13 + 1 + 6

    /// Reads a header line (without its newline): nil when it is not one of this protocol.
    public static func parseHeader(_ line: UnsafeRawBufferPointer) -> (GateWord, Int)? {
        guard line.count <= maximumHeader, let space = line.firstIndex(of: 0x20) else { return nil }
        let digits = line[(space + 1)...]
        guard let word = GateWord(rawValue: String(decoding: line[..<space], as: UTF8.self)),
              !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              digits.count == 1 || digits.first != 0x30 else { return nil }
        let length = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard length <= word.maximumPayload else { return nil }
        return (word, length)
    }

    /// The header line as written.
    var header: [UInt8] { Array("\(word.rawValue) \(body.count)\n".utf8) }

    /// The frame as written: header and payload, in one zeroizing buffer (for tests and the fuzz oracle;
    /// `write(to:)` writes the two parts without this copy).
    public func encoded() -> SecretBytes {
        let header = self.header
        let out = SecretBytes(capacity: header.count + body.count)
        header.withUnsafeBytes { _ = out.append($0) }
        body.withUnsafeBytes { _ = out.append($0) }
        return out
    }

    /// How long one frame may take to be taken by the other side (a non-blocking descriptor, as the gate's
    /// output is: a CLI that stops reading cannot hold the gate, and the rate-limit place it has, for ever).
    public static let writeSeconds = 30.0

    /// Writes the frame to `fd` whole, header and payload with one `writev` where the pipe takes them at
    /// once; false when any part could not be written (a short write is a failure), or, on a non-blocking
    /// descriptor, when the other side took none of it for `writeSeconds`.
    @discardableResult
    public func write(to fd: Int32) -> Bool {
        let header = self.header
        return header.withUnsafeBytes { head in
            body.withUnsafeBytes { payload in
                let parts = [head, payload]
                let total = head.count + payload.count
                let deadline = Deadline(secondsFromNow: Self.writeSeconds)
                var done = 0
                while done < total {
                    var vectors: [iovec] = []
                    var skipped = 0
                    for part in parts {
                        let from = max(done - skipped, 0)
                        if from < part.count {
                            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: part.baseAddress! + from), iov_len: part.count - from))
                        }
                        skipped += part.count
                    }
                    let n = vectors.withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32($0.count)) }
                    if n > 0 { done += n; continue }
                    if n < 0 && errno == EINTR { continue }
                    guard n < 0 && errno == EAGAIN else { return false }
                    var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    guard poll(&p, 1, deadline.remainingMilliseconds) > 0 else { return false }
                }
                return true
            }
        }
    }
}

/// Reads frames from a descriptor, each within a deadline. One reader per descriptor, for all its frames:
/// what one `read` brings beyond the frame it returns (a header, a payload and the next frame often come
/// together) waits in the reader for the next call. That read-ahead is in a zeroizing buffer (a payload may
/// be a secret); a payload's bytes are wiped there as soon as they are copied out, and the rest when the
/// buffer is drained. A frame's header used to be read a byte at a time (a `poll` and a `read` a byte, some
/// 40 system calls a frame).
///
/// Not `Sendable`: one exchange on one thread (the CLI's command, or the gate's session and its relay,
/// which share it) reads the descriptor.
public final class GateFrameReader {
    public enum Failure: Error, Equatable, Sendable {
        /// The other side closed before a frame began.
        case endOfInput
        /// Bytes that are not a frame, or a frame cut short.
        case malformed
        /// Nothing (or not all of a frame) came before the deadline.
        case timedOut
        case io(Int32)
    }

    let fd: Int32
    /// Bytes read ahead: `ahead[start..<ahead.count]` are not yet taken.
    private let ahead: SecretBytes
    private var start = 0

    /// `readAhead`: the read-ahead buffer's size, at least a header and its newline (a small one makes the
    /// fuzzer and the tests refill it often).
    public init(fd: Int32, readAhead: Int = 4096) {
        precondition(readAhead > GateFrame.maximumHeader, "a read-ahead buffer must hold a header")
        self.fd = fd
        ahead = SecretBytes(capacity: readAhead)
    }

    public func next(within seconds: Double) -> Result<GateFrame, Failure> {
        let deadline = Deadline(secondsFromNow: seconds)
        defer { if start == ahead.count { ahead.wipe(); start = 0 } }
        let word: GateWord, length: Int
        switch header(deadline) {
        case .failure(let f): return .failure(f)
        case .success(let h): (word, length) = h
        }
        if !word.carriesSecret {
            var bytes = [UInt8](repeating: 0, count: length)
            if let failure = bytes.withUnsafeMutableBytes({ take($0.baseAddress!, length, deadline) }) { return .failure(failure) }
            return .success(GateFrame(word, plain: bytes))
        }
        let payload = SecretBytes(capacity: length)
        var failure: Failure?
        payload.withUnsafeMutableBytes { raw, count in
            failure = take(raw.baseAddress!, length, deadline)
            if failure == nil { count = length }
        }
        if let failure { return .failure(failure) }
        return .success(GateFrame(word, payload))
    }

    /// The next header: up to its newline, which must come within `maximumHeader` bytes.
    private func header(_ deadline: Deadline) -> Result<(GateWord, Int), Failure> {
        var scanned = 0
        while true {
            let found: Result<(GateWord, Int)?, Failure> = ahead.withUnsafeBytes { bytes in
                let unread = UnsafeRawBufferPointer(rebasing: bytes[start...])
                guard let newline = unread[scanned...].prefix(GateFrame.maximumHeader + 1 - scanned).firstIndex(of: 0x0A) else {
                    return unread.count > GateFrame.maximumHeader ? .failure(.malformed) : .success(nil)
                }
                guard let parsed = GateFrame.parseHeader(UnsafeRawBufferPointer(rebasing: unread[..<newline])) else { return .failure(.malformed) }
                start += newline + 1
                return .success(parsed)
            }
            switch found {
            case .failure(let f): return .failure(f)
            case .success(let parsed?): return .success(parsed)
            case .success(nil):
                scanned = ahead.count - start
                if let f = readAhead(deadline) { return .failure(f == .endOfInput && scanned > 0 ? .malformed : f) }
            }
        }
    }

    /// Reads more into the read-ahead buffer (moving what is not yet taken to its start first); nil when
    /// some bytes came.
    private func readAhead(_ deadline: Deadline) -> Failure? {
        ahead.withUnsafeMutableBytes { raw, count in
            if start > 0 {
                let unread = count - start
                if unread > 0 { raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: unread) }
                sodium_memzero(raw.baseAddress! + unread, count - unread)
                count = unread
                start = 0
            }
            switch readSome(raw.baseAddress! + count, raw.count - count, deadline) {
            case .failure(let f): return f
            case .success(let n):
                count += n
                return nil
            }
        }
    }

    /// Takes exactly `count` bytes (a payload: an end before them is a frame cut short) into `into`: first
    /// what was read ahead, then the rest straight from the descriptor; nil when they all came.
    private func take(_ into: UnsafeMutableRawPointer, _ count: Int, _ deadline: Deadline) -> Failure? {
        let buffered = min(count, ahead.count - start)
        if buffered > 0 {
            ahead.withUnsafeMutableBytes { raw, _ in
                into.copyMemory(from: raw.baseAddress! + start, byteCount: buffered)
                sodium_memzero(raw.baseAddress! + start, buffered)
            }
            start += buffered
        }
        var done = buffered
        while done < count {
            switch readSome(into + done, count - done, deadline) {
            case .failure(let f): return f == .endOfInput ? .malformed : f
            case .success(let n): done += n
            }
        }
        return nil
    }

    private func readSome(_ into: UnsafeMutableRawPointer, _ count: Int, _ deadline: Deadline) -> Result<Int, Failure> {
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, deadline.remainingMilliseconds)
            if ready < 0 { if errno == EINTR { continue }; return .failure(.io(errno)) }
            if ready == 0 { return .failure(.timedOut) }
            let n = read(fd, into, count)
            if n < 0 { if errno == EINTR || errno == EAGAIN { continue }; return .failure(.io(errno)) }
            if n == 0 { return .failure(.endOfInput) }
            return .success(n)
        }
    }
}
