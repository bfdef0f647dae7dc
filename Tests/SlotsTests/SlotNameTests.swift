import Testing
@testable import Slots

@Suite("SlotName")
struct SlotNameTests {
    static let longestName = "A" + String(repeating: "x", count: 126) + "9"
    static let tooLongName = String(repeating: "a", count: 129)

    @Test(arguments: [
        "a", "A0", "x.y_z@w+v-1", "9", "Z", "a.", "a-", "a_", "a@", "a+", "a..b", "db.password",
        "user@example.com", longestName, String(repeating: "a", count: 128),
    ])
    func acceptsValidName(_ raw: String) throws {
        let name = try #require(SlotName(raw))
        #expect(name.rawValue == raw)
        #expect(name.description == raw)
    }

    @Test func acceptsExactly128Characters() {
        #expect(SlotName(Self.longestName) != nil)
        #expect(Self.longestName.utf8.count == SlotName.maximumLength)
    }

    @Test(arguments: [
        "",                                 // empty
        tooLongName,                        // 129 characters
        ".", "..", ".a", ".hidden",         // leading dot: ".", "..", hidden files
        "_a", "-a", "@a", "+a",             // leading punctuation
        "/", "a/b", "/a", "a/", "../a", "a/../b",
        " ", " a", "a ", "a b", "a\tb", "a\nb", "a\rb",
        "é", "café", "a\u{301}", "ａ", "名前", "a\u{1F511}",  // non-ASCII
        "\0", "a\0", "a\0b",                // NUL
        "a\\b", "a:b", "a*b", "a?b", "a~", "a$b", "a'b", "a\"b", "a%2f",
    ])
    func rejectsInvalidName(_ raw: String) {
        #expect(SlotName(raw) == nil)
    }

    @Test func rejects129Characters() {
        #expect(Self.tooLongName.utf8.count == SlotName.maximumLength + 1)
        #expect(SlotName(Self.tooLongName) == nil)
    }

    @Test func countsUTF8BytesNotCharacters() {
        // 64 two-byte characters are 128 bytes but only 64 Characters; the ASCII rule refuses them anyway.
        #expect(SlotName(String(repeating: "é", count: 64)) == nil)
    }

    @Test func sortsByRawValue() {
        let names = ["b", "a", "C", "a.b", "a0"].map(SlotName.test)
        #expect(names.sorted().map(\.rawValue) == ["C", "a", "a.b", "a0", "b"])
    }

    @Test func equalNamesHashAlike() {
        #expect(SlotName.test("x") == SlotName.test("x"))
        #expect(Set([SlotName.test("x"), SlotName.test("x"), SlotName.test("y")]).count == 2)
    }

    @Test func ruleTextNamesTheLimit() {
        #expect(SlotName.rule.contains("\(SlotName.maximumLength)"))
        #expect(!SlotName.rule.contains("\n"))
    }
}
