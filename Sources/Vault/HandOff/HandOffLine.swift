import GateProtocol
import Slots
import VaultRules

/// One line of the hand-off protocol that `vaultctl receive` writes to `vaultctl send` over ssh's channel.
///
/// The whole protocol, receiver to sender: `vaultctl-receive 1 WORD[ TEXT]\n`, where the first line is
/// `ready` (send the secret now) or a final word, and after the secret exactly one final line follows. The
/// sender, after `ready` and only then, writes the secret's length in decimal and a newline, then the
/// secret's bytes (at most 64 KiB), and closes its end: a secret cut short (a connection that dropped) is
/// told from a whole one and never delivered. Final words: `delivered` (the command took the secret and the target is unlocked),
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

    /// Where a line stands in the exchange: the receiver's first line, or the result after the secret.
    public enum Phase: Sendable {
        case first, result

        /// The words this phase allows: first `ready` or a refusal (nothing was read yet, so nothing can
        /// have been delivered or rejected); as the result, what became of the secret (never `ready` again,
        /// nor `refused`/`blocked`, which come before any secret is read).
        public func allows(_ word: Word) -> Bool {
            switch self {
            case .first: return [.ready, .refused, .blocked, .unlocked, .failed].contains(word)
            case .result: return [.delivered, .unlocked, .rejected, .failed].contains(word)
            }
        }
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

    /// The line the sender writes before the secret: its length in decimal, then a newline.
    public static func lengthHeader(_ count: Int) -> [UInt8] { Array("\(count)\n".utf8) }

    /// The secret framed by `lengthHeader` in `received` (everything the sender wrote before EOF): nil when
    /// the header is malformed, the length is 0 or over 64 KiB, or the bytes after it are not that many.
    public static func unframe(_ received: SecretBytes) -> SecretBytes? {
        received.withUnsafeBytes { (raw) -> SecretBytes? in
            guard let newline = raw.prefix(7).firstIndex(of: 0x0A), newline > 0,
                  raw[..<newline].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  newline == 1 || raw[0] != 0x30,
                  let count = Int(String(decoding: raw[..<newline], as: UTF8.self)),
                  (1...SecretBytes.maximumCount).contains(count),
                  raw.count - newline - 1 == count else { return nil }
            return SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[(newline + 1)...]))
        }
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
    static func clean(_ text: String) -> String { OneLineText.clean(text, maxBytes: maximumTextLength) }
}
