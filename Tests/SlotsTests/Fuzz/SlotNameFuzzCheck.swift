import Slots

/// The oracle of the `slot-name` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a symlink)
/// and the corpus replay test: the input bytes, decoded as UTF-8 (invalid sequences repaired), offered to
/// `SlotName(_:)`.
///
/// An accepted name is safe as a file name (not empty, no "/", no NUL, not "." or "..", no leading dot,
/// at most 128 bytes), keeps its text exactly, and survives a round trip; acceptance agrees with a separate
/// model of the rule `[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}`.
enum SlotNameFuzzCheck {
    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        let name = SlotName(text)
        let expected = model(text)
        guard let name else {
            return expected ? "SlotName refused \(text.debugDescription), which the rule allows" : nil
        }
        if !expected { return "SlotName accepted \(text.debugDescription), which the rule forbids" }
        let raw = name.rawValue
        if raw != text || Array(raw.utf8) != Array(text.utf8) { return "SlotName changed the text of \(text.debugDescription)" }
        if raw.utf8.isEmpty || raw.utf8.count > SlotName.maximumLength { return "accepted \(raw.utf8.count) bytes" }
        if raw.utf8.contains(0x2F) { return "accepted a name with '/': \(raw.debugDescription)" }
        if raw.utf8.contains(0) { return "accepted a name with NUL: \(raw.debugDescription)" }
        if raw == "." || raw == ".." || raw.hasPrefix(".") { return "accepted a dot name: \(raw.debugDescription)" }
        if raw.unicodeScalars.contains(where: { !$0.isASCII }) { return "accepted non-ASCII: \(raw.debugDescription)" }
        guard let again = SlotName(raw), again == name, again.description == raw else {
            return "\(raw.debugDescription) does not survive a round trip"
        }
        return nil
    }

    /// The rule, written independently of `SlotName`: over Unicode scalars, not bytes.
    static func model(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.first, scalars.count <= 128 else { return false }
        func alnum(_ s: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s)
        }
        return alnum(first) && scalars.dropFirst().allSatisfy { alnum($0) || "._@+-".unicodeScalars.contains($0) }
    }
}
