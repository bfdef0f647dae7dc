import Testing
@testable import Slots

/// Command-line words keep their bytes: valid UTF-8 as it is, invalid bytes as escapes that `Quote` shows
/// as `\xNN` and `bytes(of:)` turns back into the same bytes.
@Suite struct ArgumentBytesTests {
    static let words: [[UInt8]] = [
        Array("plain-ascii".utf8), Array("Grüße".utf8), Array("SELECT 'Grüße' FROM t".utf8),
        Array("/home/u/Документы/policy.json".utf8), Array("日本語".utf8), Array("café€🙂".utf8), [],
        [0x62, 0x61, 0x64, 0xFF, 0x6E], [0x61, 0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
        [0xF4, 0x8F, 0xBD, 0x81, 0x41],  // U+10FF41, inside the escape range, then 'A'
        [0xC3, 0xA9, 0xFF, 0xC3, 0xA9],
    ]

    @Test(arguments: words)
    func everyWordComesBackByteForByte(word: [UInt8]) {
        #expect(ArgumentBytes.bytes(of: ArgumentBytes.decode(word)) == word)
    }

    @Test func validUTF8IsDecodedAsItIs() {
        for text in ["Grüße", "SELECT 'Grüße' FROM t", "/home/u/Документы/policy.json", "日本語", "café€🙂"] {
            #expect(ArgumentBytes.decode(Array(text.utf8)) == text)
        }
    }

    @Test func invalidBytesAreShownEscapedNeverAsTheReplacementCharacter() {
        let shown = Quote.text(ArgumentBytes.decode([0x62, 0x61, 0x64, 0xFF, 0x6E]))
        #expect(shown == #"'bad\xffn'"#)
        #expect(!shown.contains("\u{FFFD}"))
        #expect(Quote.text(ArgumentBytes.decode([0xC3, 0xA9, 0xC3])) == #"'é\xc3'"#)
    }
}
