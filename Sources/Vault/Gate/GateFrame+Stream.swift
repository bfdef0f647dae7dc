import GateProtocol

/// Frames read from a whole stream at once: the fuzzer's oracle for `GateFrameReader` and the protocol
/// tests' parser. Neither the gate nor the CLI reads a stream this way, so it is not in the gate's modules.
extension GateFrame {
    /// Every frame in `stream`, in order; nil when any part of it is not a frame of this protocol or the
    /// last one is cut short. (The parser the fuzzer drives: `GateFrameReader`, in GateProtocol, uses the same
    /// header check.)
    public static func parseAll(_ stream: UnsafeRawBufferPointer) -> [GateFrame]? {
        var frames: [GateFrame] = []
        var at = 0
        while at < stream.count {
            let rest = UnsafeRawBufferPointer(rebasing: stream[at...])
            guard let newline = rest.prefix(maximumHeader + 1).firstIndex(of: 0x0A),
                  let (word, length) = parseHeader(UnsafeRawBufferPointer(rebasing: rest[..<newline])),
                  rest.count - newline - 1 >= length else { return nil }
            let start = newline + 1
            frames.append(GateFrame(word, reading: UnsafeRawBufferPointer(rebasing: rest[start..<(start + length)])))
            at += start + length
        }
        return frames
    }
}
