/// One line of the hand-off protocol that `vaultctl receive` writes to `vaultctl send` over ssh's channel.
///
/// The whole protocol, receiver to sender: `vaultctl-receive 1 WORD[ TEXT]\n`, where the first line is
/// `ready` (send the secret now) or a final word, and after the secret exactly one final line follows. The
/// sender, after `ready` and only then, writes the secret's bytes and closes its end (EOF ends the secret;
/// at most 64 KiB). Final words: `delivered` (the command took the secret and the target is unlocked),
/// `unlocked` (it already was, or became so before delivery: nothing was delivered), `refused` (a check said
/// no before any secret was read), `blocked` (the receiver's rate limit), `rejected` (the command read the
/// secret and failed, or the target stayed locked: counted as a failed attempt on both sides), `failed`
/// (anything else). TEXT is the reason in words, one line of printable text, at most 512 bytes.
///
/// Parsing is strict: anything else (another version, an unknown word, a control character, a line longer
/// than 1024 bytes) is not a line of this protocol.
public struct HandOffLine: Sendable, Equatable {
    public enum Word: String, Sendable, CaseIterable {
        case ready, delivered, unlocked, refused, blocked, rejected, failed
    }

    public static let prefix = "vaultctl-receive 1 "
    /// The longest line accepted, newline excluded.
    public static let maximumLength = 1024
    static let maximumTextLength = 512

    public let word: Word
    public let text: String

    public init(_ word: Word, _ text: String = "") {
        self.word = word
        self.text = HandOffLine.clean(text)
    }

    /// The line as written, with its newline.
    public var bytes: [UInt8] {
        Array((HandOffLine.prefix + word.rawValue + (text.isEmpty ? "" : " " + text) + "\n").utf8)
    }

    /// Reads one line (without its newline); nil when it is not a line of this protocol.
    public static func parse(_ line: [UInt8]) -> HandOffLine? {
        guard line.count <= maximumLength,
              line.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }),
              let text = String(validating: line, as: UTF8.self),
              text.hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        let wordText = rest.prefix { $0 != " " }
        guard let word = Word(rawValue: String(wordText)) else { return nil }
        let after = rest.dropFirst(wordText.count)
        if after.isEmpty { return HandOffLine(word) }
        guard after.first == " ", after.count > 1 else { return nil }
        let reason = String(after.dropFirst())
        guard reason.utf8.count <= maximumTextLength, clean(reason) == reason else { return nil }
        return HandOffLine(word, reason)
    }

    /// Text made one protocol line's reason: control characters (C0, DEL, C1) become spaces, cut at
    /// 512 bytes on a character boundary.
    static func clean(_ text: String) -> String {
        var out = ""
        var length = 0
        for scalar in text.unicodeScalars {
            let shown: Unicode.Scalar = (scalar.value < 0x20 || scalar.value == 0x7f || (0x80...0x9f).contains(scalar.value)) ? " " : scalar
            let size = String(shown).utf8.count
            if length + size > maximumTextLength { break }
            out.unicodeScalars.append(shown)
            length += size
        }
        return out
    }
}
