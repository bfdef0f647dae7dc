@testable import Slots

/// The oracle of the `sealed-file` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a symlink)
/// and the corpus replay test: arbitrary bytes offered as the device file of slot `kat`.
///
/// Whatever the bytes: no trap; `parseHeader` either describes a header that fits inside the input or says
/// "tampered"; `open` yields plaintext only for a real seal (sealing that plaintext again with the file's own
/// nonce gives back exactly the input), and otherwise fails with a one-line error that carries no file bytes
/// except a valid slot name. The key and machine are those of the known-answer vector in
/// `SealedFileFormatTests`, so `Fuzz/corpus/sealed-file/valid-kat` opens.
///
/// Not `Sendable`-relevant: only `let` constants of value types and a key the harness reads on one thread.
enum SealedFileFuzzCheck {
    static let path = "/fuzz/slots/kat"
    static let name = SlotName("kat")!
    static let machine = MachineIdentity(id: Array("0123456789abcdef0123456789abcdef".utf8))
    nonisolated(unsafe) static let key: SecretBytes = {
        let random: [UInt8] = Array(0..<32)
        let seed = random.withUnsafeBytes { SecretBytes(copying: $0) }
        return DeviceKey(testRandom: seed, machine: machine).key
    }()
    static let machineTag = machine.tag
    /// Where the nonce starts in a file of slot `kat`: magic, version, tag, name length, "kat".
    static let nonceOffset = 8 + 1 + 16 + 1 + 3

    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        if let problem = headerViolation(input) { return problem }
        let file = SecretBytes(copying: input)
        do throws(SlotError) {
            let plain = try SealedFileFormat.open(file, name: name, machineTag: machineTag, key: key, path: path)
            guard input.count >= nonceOffset + Sodium.nonceBytes + Sodium.tagBytes else {
                return "open returned plaintext for \(input.count) bytes, fewer than any seal of 'kat' has"
            }
            let nonce = Array(input[nonceOffset..<(nonceOffset + Sodium.nonceBytes)])
            let again = SealedFileFormat.seal(plain, name: name, machineTag: machineTag, key: key, nonce: nonce)
            guard again == Array(input) else {
                return "open returned plaintext for bytes that are not a seal of it"
            }
            return nil
        } catch {
            return errorViolation(error)
        }
    }

    /// `parseHeader` alone: a header it accepts lies inside the input and leaves room for the tag.
    static func headerViolation(_ input: UnsafeRawBufferPointer) -> String? {
        do throws(SlotError) {
            let h = try SealedFileFormat.parseHeader(input, path: path)
            if h.machineTag.count != 16 { return "parseHeader returned a \(h.machineTag.count)-byte machine tag" }
            if h.nonce.count != Sodium.nonceBytes { return "parseHeader returned a \(h.nonce.count)-byte nonce" }
            if h.count + Sodium.tagBytes > input.count {
                return "parseHeader accepted a header of \(h.count) bytes in \(input.count) bytes, no room for the tag"
            }
            if h.name.unicodeScalars.count > 255 { return "parseHeader returned a name of \(h.name.unicodeScalars.count) characters" }
            return nil
        } catch {
            guard case .tampered(path, _) = error else { return "parseHeader threw \(error), not tampered" }
            return oneLine(error)
        }
    }

    static func errorViolation(_ error: SlotError) -> String? {
        switch error {
        case .tampered(path, _), .foreignMachine(path):
            return oneLine(error)
        case .wrongSlot(path, let owner):
            guard let valid = SlotName(owner), valid != name else {
                return "open named an owner that is not a valid other slot name (\(owner.utf8.count) bytes)"
            }
            return oneLine(error)
        default:
            return "open threw an unexpected error: \(error)"
        }
    }

    /// The words a person reads are one line of printable text.
    static func oneLine(_ error: SlotError) -> String? {
        let text = SlotErrorText.describe(error)
        for scalar in text.unicodeScalars where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
            || scalar == "\u{2028}" || scalar == "\u{2029}" {
            return "the message holds control character U+\(String(scalar.value, radix: 16)): \(text.debugDescription)"
        }
        return nil
    }
}
