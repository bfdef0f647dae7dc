#if canImport(Glibc)
import Glibc
#endif
import Slots

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
        switch self {
        case .secret, .answer, .ok: return SecretBytes.maximumCount
        default: return 4096
        }
    }

    /// The words the CLI may send, and the ones the gate may send.
    public var fromClient: Bool { [.request, .secret, .answer, .cancel].contains(self) }
}

/// One frame of the protocol between `vaultctl` and `vaultctl-gate` on the gate's standard input and
/// output: a header line `WORD LENGTH\n` (a `GateWord`, one space, the payload's length in decimal without
/// leading zeros, at most the word's `maximumPayload`), then exactly LENGTH bytes, which may be anything.
/// Parsing is strict: anything else ends the exchange. Payloads always live in `SecretBytes`, since some
/// are passwords and values.
public struct GateFrame {
    public let word: GateWord
    public let payload: SecretBytes

    public init(_ word: GateWord, _ payload: SecretBytes) {
        self.word = word
        self.payload = payload
    }

    public init(_ word: GateWord, text: String) {
        self.word = word
        payload = Array(text.utf8).withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// The payload as text (for words that carry text): invalid UTF-8 is repaired, never trusted.
    public var text: String { payload.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// The longest header line, newline excluded: the longest word, a space, six digits.
    static let maximumHeader = 13 + 1 + 6

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

    /// The frame as written: header and payload, in one zeroizing buffer.
    public func encoded() -> SecretBytes {
        let header = Array("\(word.rawValue) \(payload.count)\n".utf8)
        let out = SecretBytes(capacity: header.count + payload.count)
        header.withUnsafeBytes { _ = out.append($0) }
        payload.withUnsafeBytes { _ = out.append($0) }
        return out
    }

    /// How long one frame may take to be taken by the other side (a non-blocking descriptor, as the gate's
    /// output is: a CLI that stops reading cannot hold the gate, and the rate-limit place it has, for ever).
    public static let writeSeconds = 30.0

    /// Writes the frame to `fd` whole; false when any part could not be written (a short write is a failure),
    /// or, on a non-blocking descriptor, when the other side took none of it for `writeSeconds`.
    @discardableResult
    public func write(to fd: Int32) -> Bool {
        let bytes = encoded()
        return bytes.withUnsafeBytes { raw -> Bool in
            let deadline = Deadline(secondsFromNow: Self.writeSeconds)
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n > 0 { done += n; continue }
                if n < 0 && errno == EINTR { continue }
                guard n < 0 && errno == EAGAIN else { return false }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&p, 1, deadline.remainingMilliseconds) > 0 else { return false }
            }
            return true
        }
    }

    /// Every frame in `stream`, in order; nil when any part of it is not a frame of this protocol or the
    /// last one is cut short. (The parser the fuzzer drives: the reader below uses the same header check.)
    public static func parseAll(_ stream: UnsafeRawBufferPointer) -> [GateFrame]? {
        var frames: [GateFrame] = []
        var at = 0
        while at < stream.count {
            let rest = UnsafeRawBufferPointer(rebasing: stream[at...])
            guard let newline = rest.prefix(maximumHeader + 1).firstIndex(of: 0x0A),
                  let (word, length) = parseHeader(UnsafeRawBufferPointer(rebasing: rest[..<newline])),
                  rest.count - newline - 1 >= length else { return nil }
            let start = newline + 1
            frames.append(GateFrame(word, SecretBytes(copying: UnsafeRawBufferPointer(rebasing: rest[start..<(start + length)]))))
            at += start + length
        }
        return frames
    }
}

/// Reads frames from a descriptor, each within a deadline, without reading past the frame it returns.
public struct GateFrameReader {
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

    public init(fd: Int32) { self.fd = fd }

    public func next(within seconds: Double) -> Result<GateFrame, Failure> {
        let deadline = Deadline(secondsFromNow: seconds)
        var header: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            switch readSome(&byte, 1, deadline) {
            case .failure(let f): return .failure(f == .endOfInput && !header.isEmpty ? .malformed : f)
            case .success: break
            }
            if byte == 0x0A { break }
            header.append(byte)
            if header.count > GateFrame.maximumHeader { return .failure(.malformed) }
        }
        guard let (word, length) = header.withUnsafeBytes({ GateFrame.parseHeader($0) }) else { return .failure(.malformed) }
        let payload = SecretBytes(capacity: length)
        var failure: Failure?
        payload.withUnsafeMutableBytes { raw, count in
            while count < length {
                switch readSome(raw.baseAddress! + count, length - count, deadline) {
                case .failure(let f): failure = f == .endOfInput ? .malformed : f; return
                case .success(let n): count += n
                }
            }
        }
        if let failure { return .failure(failure) }
        return .success(GateFrame(word, payload))
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
