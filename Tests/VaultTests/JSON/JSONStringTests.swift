import Testing
@testable import JSON

/// Strings: every JSON escape read, only valid text accepted, and what is written read back unchanged.
@Suite struct JSONStringTests {
    @Test func everyEscapeIsDecoded() throws {
        #expect(try parseJSON(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{c}\n\r\t"))
    }

    @Test func unicodeEscapesAreDecodedInEitherCase() throws {
        #expect(try parseJSON(#""\u0041\u00e9\u00E9\u20ac\u0000""#) == .string("Aéé€\u{0}"))
    }

    @Test func surrogatePairIsOneScalar() throws {
        #expect(try parseJSON(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parseJSON(#""\uD83D\uDE00x""#) == .string("😀x"))
        #expect(try parseJSON(#""\udbff\udfff""#) == .string("\u{10ffff}"))
    }

    @Test(arguments: [#""\ud800""#, #""\ud800x""#, #""\ud800\n""#, #""\ud800\u0041""#, #""\udc00""#, #""\ude00\ud83d""#,
                      #""\ud800\ud800""#, #""a\udfffb""#])
    func loneSurrogateIsRejected(text: String) {
        #expect(jsonRejection(text) == .unreadableValue(JSONPath()))
    }

    @Test(arguments: [#""\x""#, #""\u12""#, #""\u12g4""#, #""\U0041""#, #""\'""#, #""\ ""#, #""\0""#])
    func unknownOrShortEscapeIsRejected(text: String) {
        #expect(jsonRejection(text) == .unreadableValue(JSONPath()))
    }

    @Test func rawUTF8IsRead() throws {
        #expect(try parseJSON("\"é€😀 \u{7f}\u{2028}\"") == .string("é€😀 \u{7f}\u{2028}"))
    }

    @Test(arguments: [
        [0xff], [0xfe], [0xc3], [0xc3, 0x28], [0x80], [0xc0, 0x80], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82],
    ] as [[UInt8]])
    func invalidUTF8IsRejected(bad: [UInt8]) {
        let quote = UInt8(ascii: "\"")
        #expect(jsonRejection(bytes: [quote] + bad + [quote]) == .unreadableValue(JSONPath()))
        #expect(jsonRejection(bytes: Array(#"{"k":["#.utf8) + [quote, 0x61] + bad + [quote] + Array("]}".utf8))
                == .unreadableValue(JSONPath([.key("k"), .index(0)])))
    }

    @Test func invalidUTF8BetweenEscapesIsRejected() {
        let bytes = Array(#""\u00e9"#.utf8) + [0xa9] + Array(#"\n""#.utf8)
        #expect(jsonRejection(bytes: bytes) == .unreadableValue(JSONPath()))
    }

    @Test func invalidUTF8OutsideAStringIsASyntaxError() {
        #expect(isSyntaxError(jsonRejection(bytes: [0xff])))
        #expect(isSyntaxError(jsonRejection(bytes: Array("[1,".utf8) + [0xc3, 0xa9] + Array("]".utf8))))
    }

    @Test(arguments: Array(0x00...0x1f) as [UInt8])
    func rawControlCharacterIsRejected(byte: UInt8) {
        #expect(jsonRejection(bytes: Array(#"{"a":"x"#.utf8) + [byte] + Array(#""}"#.utf8)) == .unreadableValue(JSONPath([.key("a")])))
    }

    @Test func keyThatIsNotAValidStringIsASyntaxErrorOnItsLine() {
        #expect(jsonRejection(bytes: Array("{\n\"".utf8) + [0xff] + Array(#"":1}"#.utf8))
                == .syntax(line: 2, expected: "a key that is a valid string"))
        #expect(jsonRejection(#"{"\ud800":1}"#) == .syntax(line: 1, expected: "a key that is a valid string"))
    }

    // MARK: Writing

    @Test func writerEscapesQuotesBackslashesAndControlCharactersOnly() {
        #expect(writtenJSON(.string("a\"b\\c\n\r\t\u{0}\u{8}\u{c}\u{1f}")) == #""a\"b\\c\n\r\t\u0000\u0008\u000c\u001f""#)
        #expect(writtenJSON(.string("/path/to é€😀 \u{7f}\u{2028}")) == "\"/path/to é€😀 \u{7f}\u{2028}\"")
    }

    @Test func commandLineOutputEscapesTheSameWay() {
        let text = "slot \"a\"\\\n\u{1}/é"
        #expect(JSONEscaping.quoted(text) == writtenJSON(.string(text)))
    }

    @Test func everyKindOfTextRoundTrips() throws {
        var scalars: [Unicode.Scalar] = (0..<0x300).compactMap(Unicode.Scalar.init)
        scalars += [0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff].compactMap(Unicode.Scalar.init)
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        let value = JSONValue.object([text: .string(text)])

        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
        #expect(try JSONParser.parse(JSONWriter.bytes(value, style: .pretty)) == value)
    }

    @Test func escapedTextReadsAsTheSameScalars() throws {
        // The scalars must survive, not just compare equal under Swift's canonical equivalence.
        let value = try parseJSON(#""e\u0301""#)
        #expect(value.stringValue.map { Array($0.unicodeScalars) } == ["e", "\u{301}"])
    }
}
