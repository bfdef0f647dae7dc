@testable import Slots

/// The oracle of the `dbus-message` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a
/// symlink) and the corpus replay test: the input bytes as a message from the bus.
///
/// Whatever a peer sends, framing, parsing and reading the body never trap; a length, when known, covers
/// at least the fixed header; and a body that parses re-encodes to bytes that parse back to the same
/// encoding (so what we read is what was there).
enum DBusMessageFuzzCheck {
    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        let bytes = Array(input)
        let length: Int?
        do { length = try DBusMessage.length(ofMessageIn: bytes[...]) } catch { return nil }
        if let length, length < 16 { return "a message length of \(length) bytes, shorter than the fixed header" }
        guard let length, length <= bytes.count else { return nil }
        guard let message = try? DBusMessage.parse(Array(bytes[..<length])) else { return nil }
        guard let arguments = message.arguments() else { return nil }
        var first = DBusEncoder()
        for a in arguments { first.write(a) }
        var decoder = DBusDecoder(first.bytes, from: 0, to: first.bytes.count, littleEndian: true)
        guard let again = decoder.read(signature: message.signature), decoder.isAtEnd else {
            return "the body of signature \(message.signature) does not parse once re-encoded"
        }
        var second = DBusEncoder()
        for a in again { second.write(a) }
        if second.bytes != first.bytes { return "the body of signature \(message.signature) changes when re-encoded" }
        return nil
    }
}
