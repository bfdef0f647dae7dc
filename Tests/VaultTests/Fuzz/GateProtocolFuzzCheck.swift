import Slots
import Vault

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
