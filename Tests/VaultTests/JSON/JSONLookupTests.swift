import Testing
@testable import JSON

/// `JSONParser.values(at:in:)`: the members asked for, the same as a full parse gives, and the same
/// refusals of text that is not JSON, except for duplicate keys away from the paths asked for.
@Suite struct JSONLookupTests {
    static func lookup(_ text: String, _ paths: [[String]]) throws(JSONError) -> [JSONValue?] {
        try JSONParser.values(at: paths, in: Array(text.utf8))
    }

    static func parsed(_ text: String) throws(JSONError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    static let record = #"{"version": 1, "slots": {"wifi": "device", "gh": "sync", "n\u00e9": "device", "x": [1, {"y": null}]}}"#

    @Test func membersAreWhatAFullParseHas() throws {
        let paths = [["version"], ["slots", "gh"], ["slots", "wifi"], ["slots", "né"], ["slots", "x"], ["slots", "absent"],
                     ["absent"], ["version", "not-an-object"], ["slots"]]
        let found = try Self.lookup(Self.record, paths)
        let whole = try Self.parsed(Self.record)
        for (path, value) in zip(paths, found) {
            #expect(value == whole.member(at: path.map { Array($0.utf8) }[...]), "\(path)")
        }
        #expect(found[1] == .string("sync") && found[3] == .string("device") && found[5] == nil && found[6] == nil)
    }

    @Test func aKeyWrittenWithEscapesMatchesItsText() throws {
        #expect(try Self.lookup(#"{"slots": {"\u0077ifi": "sync"}}"#, [["slots", "wifi"]]) == [.string("sync")])
    }

    /// Everything `parse` refuses, the lookup refuses too, wherever in the text it is.
    @Test(arguments: [
        #"{"slots": {"a": "device",}}"#, #"{"slots": {"a": "dev"#, #"{"slots": {"a": 01}}"#,
        #"{"slots": {"a": "\ud800"}}"#, "{\"slots\": {\"a\": \"\u{01}\"}}", #"{"other": [1, 2,], "slots": {}}"#,
        #"{"slots": {}} x"#, #"{"slots": {"a": tru}}"#, #"{"slots": {"a": "\x"}}"#, #"{"slots": {} "#,
        #"{"b": {"c": "\u00"}, "slots": {"a": "sync"}}"#, #"{"slots": {"a": "sync"}, "z": NaN}"#,
    ])
    func invalidTextIsRefusedAsByParse(_ text: String) {
        #expect(throws: JSONError.self) { try Self.parsed(text) }
        #expect(throws: JSONError.self) { try Self.lookup(text, [["slots", "a"]]) }
    }

    @Test func invalidUTF8AnywhereIsRefused() {
        var bytes = Array(#"{"other": "ab", "slots": {"a": "sync"}}"#.utf8)
        bytes[12] = 0xC3; bytes[13] = 0x28  // "ab" → an invalid two-byte sequence
        #expect(throws: JSONError.self) { try JSONParser.parse(bytes) }
        #expect(throws: JSONError.self) { try JSONParser.values(at: [["slots", "a"]], in: bytes) }
    }

    @Test func aDuplicateOnThePathIsRefused() {
        #expect(throws: JSONError.self) { try Self.lookup(#"{"slots": {"a": "sync", "a": "device"}}"#, [["slots", "a"]]) }
        #expect(throws: JSONError.self) { try Self.lookup(#"{"slots": {"a": "sync"}, "slots": {}}"#, [["slots", "a"]]) }
    }

    /// The one difference from `parse`: a duplicate away from the paths asked for makes no answer ambiguous.
    @Test func aDuplicateAwayFromThePathsIsNotLookedFor() throws {
        let text = #"{"slots": {"a": "sync", "b": "device", "b": "sync"}}"#
        #expect(throws: JSONError.self) { try Self.parsed(text) }
        #expect(try Self.lookup(text, [["slots", "a"]]) == [.string("sync")])
    }

    @Test func nestingBeyondTheLimitIsRefusedEvenWhereNothingIsAskedFor() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONError.self) { try Self.lookup(#"{"x": \#(deep), "slots": {}}"#, [["slots", "a"]]) }
    }
}
