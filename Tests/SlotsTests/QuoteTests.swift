import Testing
import Slots

/// `Quote`: user input made safe for a one-line message, as systemd's `cescape` does.
@Suite struct QuoteTests {
    @Test func controlAndInvisibleCharactersAreEscaped() {
        #expect(Quote.text("a\u{1b}]0;PWNED\u{07}\u{1b}[2J") == #"'a\x1b]0;PWNED\x07\x1b[2J'"#)
        #expect(Quote.text("two\nlines\tand\r") == #"'two\nlines\tand\r'"#)
        #expect(Quote.text("\u{7f}\u{85}\u{9b}") == #"'\x7f\u{0085}\u{009b}'"#)
        #expect(Quote.text("rtl\u{202e}zero\u{200b}sep\u{2028}") == #"'rtl\u{202e}zero\u{200b}sep\u{2028}'"#)
    }

    @Test func quotesAndBackslashesAreEscapedInsideQuotes() {
        #expect(Quote.text(#"it's a\b"#) == #"'it\'s a\\b'"#)
    }

    @Test func printableTextIsKeptAsItIs() {
        #expect(Quote.text("wifi-home_2@x+y") == "'wifi-home_2@x+y'")
        #expect(Quote.text("café ünïcode 鍵") == "'café ünïcode 鍵'")
        #expect(Quote.oneLine("Slot 'x' is empty.") == "Slot 'x' is empty.")
    }

    @Test func aWholeMessageBecomesOneLineWithoutDoubleEscaping() {
        #expect(Quote.oneLine("first\nsecond \\x already") == #"first\nsecond \x already"#)
    }
}
