#if canImport(Glibc)
import Glibc
#endif
import Slots
@testable import GateProtocol
import Vault
@testable import VaultRules

/// The oracle of the `gate-protocol` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a
/// symlink) and the corpus replay test: arbitrary bytes offered to the gate protocol's parsers as a whole
/// stream of frames (`GateFrame.parseAll`), and each frame's payload to the parser of what it carries
/// (`GateRequest`, `GateRefusal`, `GateHolding`).
///
/// Whatever the bytes: no trap, the same answer twice, and what parses is exactly what was given: the frames
/// written again are the input byte for byte, each payload within its word's bound, a request printed and
/// parsed again is the same request, a refusal's error encodes to a payload that decodes to it again, and a
/// holding answer printed and parsed again is the same answer.
enum GateProtocolFuzzCheck {
    /// The same bytes through the reader the CLI and the gate use (`GateFrameReader`, which reads ahead of
    /// the frame it returns, here into a small buffer), from a pipe: exactly the frames `parseAll` finds, then the end of input; or,
    /// where `parseAll` finds none, a malformed stream before the end. Inputs a pipe cannot hold at once
    /// are left to `parseAll`.
    static func readerViolation(_ input: UnsafeRawBufferPointer, parsed: [GateFrame]?) -> String? {
        guard input.count < 60_000 else { return nil }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        defer { close(fds[0]) }
        if input.count > 0, write(fds[1], input.baseAddress, input.count) != input.count {
            close(fds[1])
            return nil
        }
        close(fds[1])
        // A small read-ahead buffer (the smallest a header allows, then one that often ends mid-frame), so
        // that whole inputs written at once still refill it, mid-header and mid-payload.
        let reader = GateFrameReader(fd: fds[0], readAhead: input.count % 2 == 0 ? GateFrame.maximumHeader + 1 : 37)
        var frames: [GateFrame] = []
        while true {
            switch reader.next(within: 5) {
            case .success(let frame):
                frames.append(frame)
                if frames.count > input.count { return "the reader found more frames than there are bytes" }
                continue
            case .failure(.endOfInput):
                guard let parsed else { return "the reader took a stream that parseAll refuses" }
                if frames.count != parsed.count { return "the reader found \(frames.count) frames, parseAll \(parsed.count)" }
                for (a, b) in zip(frames, parsed) where a.word != b.word || !a.encoded().constantTimeEquals(b.encoded()) {
                    return "the reader's \(a.word.rawValue) frame differs from parseAll's"
                }
                return nil
            case .failure(.malformed):
                return parsed == nil ? nil : "the reader refused a stream that parseAll takes"
            case .failure(let other):
                return "the reader failed on a closed pipe: \(other)"
            }
        }
    }

    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        let first = GateFrame.parseAll(input)
        let again = GateFrame.parseAll(input)
        guard (first == nil) == (again == nil), first?.count == again?.count else { return "two parses of the same bytes disagree" }
        if let frames = first {
            var written: [UInt8] = []
            for frame in frames {
                if frame.body.count > frame.word.maximumPayload {
                    return "a \(frame.word.rawValue) frame with \(frame.body.count) bytes"
                }
                written += frame.encoded().withUnsafeBytes { Array($0) }
                if let problem = payloadViolation(frame) { return problem }
            }
            if written != Array(input) { return "the frames written again are not the input" }
        }
        if let problem = readerViolation(input, parsed: first) { return problem }
        // Every payload parser also gets the raw bytes as text.
        return payloadViolation(GateFrame(.request, SecretBytes(copying: input)))
            ?? payloadViolation(GateFrame(.refused, SecretBytes(copying: input)))
            ?? payloadViolation(GateFrame(.ok, SecretBytes(copying: input)))
    }

    static func payloadViolation(_ frame: GateFrame) -> String? {
        let text = frame.text
        switch frame.word {
        case .request:
            guard let request = GateRequest.parse(text) else { return nil }
            if GateRequest.parse(request.text) != request { return "request \(request.text.debugDescription) does not parse back to itself" }
            if request.text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
                return "request \(request.text.debugDescription) holds a control character"
            }
        case .refused:
            guard let error = GateRefusal.decode(text) else { return nil }
            let encoded = GateRefusal.encode(error)
            guard let back = GateRefusal.decode(encoded) else { return "refusal \(encoded.debugDescription) does not decode" }
            if GateRefusal.encode(back) != encoded { return "refusal \(encoded.debugDescription) changes when decoded and encoded again" }
        case .ok:
            guard case .some(let holding) = GateHolding.parse(text) else { return nil }
            if GateHolding.parse(GateHolding.text(holding)) != .some(holding) {
                return "holding answer \(GateHolding.text(holding).debugDescription) does not parse back to itself"
            }
        default:
            break
        }
        return nil
    }
}
