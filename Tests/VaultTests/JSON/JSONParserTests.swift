import Testing
@testable import JSON

/// The grammar: what `JSONParser` reads, and the text around the value it refuses.
@Suite struct JSONParserTests {
    @Test func readsEveryKindOfValue() throws {
        let value = try parseJSON(#"{"a":null,"b":true,"c":false,"d":7,"e":1.5,"f":"x","g":[1,[]],"h":{}}"#)

        #expect(value == .object([
            "a": .null, "b": .bool(true), "c": .bool(false), "d": .integer(7), "e": .number(1.5), "f": .string("x"),
            "g": .array([.integer(1), .array([])]), "h": .object([:]),
        ]))
    }

    @Test(arguments: ["null", "true", "false", "0", "-1", "\"\"", "[]", "{}"])
    func aScalarOrEmptyContainerIsADocument(text: String) throws {
        _ = try parseJSON(text)
    }

    @Test func whitespaceAroundAndBetweenTokensIsSkipped() throws {
        #expect(try parseJSON(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] }\n\n") == .object(["a": .array([.integer(1), .integer(2)])]))
    }

    @Test func byteOrderMarkBeforeTheValueIsSkipped() throws {
        #expect(try JSONParser.parse([0xef, 0xbb, 0xbf] + Array("[1]".utf8)) == .array([.integer(1)]))
    }

    @Test func byteOrderMarkAnywhereElseIsRejected() {
        #expect(isSyntaxError(jsonRejection(bytes: Array(" ".utf8) + [0xef, 0xbb, 0xbf] + Array("[1]".utf8))))
        #expect(isSyntaxError(jsonRejection(bytes: Array("[1]".utf8) + [0xef, 0xbb, 0xbf])))
    }

    @Test(arguments: ["", " ", "\n"])
    func emptyTextIsRejected(text: String) {
        #expect(jsonRejection(text) == .syntax(line: text == "\n" ? 2 : 1, expected: "a value"))
    }

    @Test(arguments: ["{} {}", "1 2", "[1]]", "{\"a\":1}}", "true false", "null,", "\"a\"\"b\"", "{}\u{0}", "[] // comment", "0x10"])
    func trailingGarbageIsRejected(text: String) {
        #expect(jsonRejection(text) == .syntax(line: 1, expected: "the end of the text"))
    }

    @Test(arguments: ["{", "[", "[1", "[1,", "{\"a\"", "{\"a\":", "{\"a\":1", "\"abc", "tru", "nul", "-"])
    func textThatEndsInsideAValueIsRejected(text: String) {
        #expect(isSyntaxError(jsonRejection(text)))
    }

    @Test(arguments: ["{'a':1}", "{a:1}", "[1 2]", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "[,1]", "{,}", "[1,,2]", "{1:2}",
                      "NaN", "Infinity", "-Infinity", "undefined", "True", "nulll", "[tru]", "+1", ".5", "1.", "1e", "1e+",
                      "01", "-01", "00", "0.e1", "[\u{0}]", "\u{b}[]", "[]\u{c}"])
    func nonJSONIsRejected(text: String) {
        #expect(isSyntaxError(jsonRejection(text)))
    }

    @Test func aSyntaxErrorNamesItsLine() {
        #expect(jsonRejection("{\n\"a\": 1,\n\"b\" 2\n}") == .syntax(line: 3, expected: "':' after the key"))
    }

    // MARK: Trailing commas

    @Test(arguments: ["[1,]", "{\"a\":1,}", "[1, ]", "{\"a\":1 , \n}", "[[],]"])
    func trailingCommaIsRejected(text: String) {
        #expect(jsonRejection(text) == .trailingComma(line: 1))
    }

    @Test func trailingCommaNamesTheLineOfTheComma() {
        #expect(jsonRejection("{\n  \"a\": [1,\n  2,\n\n  ]\n}") == .trailingComma(line: 3))
    }

    @Test func commaInAStringIsNotATrailingComma() throws {
        #expect(try parseJSON(#"["a,]", "{,}"]"#) == .array([.string("a,]"), .string("{,}")]))
    }

    // MARK: Depth

    @Test func nestingUpToTheLimitIsRead() throws {
        let text = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try parseJSON(text, maximumDepth: 32)
        _ = try parseJSON(String(repeating: "{\"a\":", count: 31) + "[]" + String(repeating: "}", count: 31), maximumDepth: 32)
    }

    @Test(arguments: [33, 1000, 100_000])
    func nestingBeyondTheLimitIsRejected(depth: Int) {
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(jsonRejection(text, maximumDepth: 32) == .tooDeep(limit: 32))
    }

    @Test func unclosedDeepNestingIsRejectedAsTooDeep() {
        #expect(jsonRejection(String(repeating: "{\"a\":", count: 50_000)) == .tooDeep(limit: JSONParser.defaultMaximumDepth))
        #expect(jsonRejection(String(repeating: "[", count: 50_000)) == .tooDeep(limit: JSONParser.defaultMaximumDepth))
    }

    @Test func theLimitIsTheCallers() throws {
        #expect(jsonRejection("[[1]]", maximumDepth: 1) == .tooDeep(limit: 1))
        #expect(try parseJSON("[[1]]", maximumDepth: 2) == .array([.array([.integer(1)])]))
        #expect(try parseJSON("1", maximumDepth: 0) == .integer(1))
    }

    @Test func bracketsInStringsDoNotNest() throws {
        let text = "[\"" + String(repeating: "[{", count: 1000) + "\"]"
        #expect(try parseJSON(text, maximumDepth: 1) == .array([.string(String(repeating: "[{", count: 1000))]))
    }

    // MARK: Duplicate keys

    @Test func duplicateKeyIsRejectedWithItsPath() {
        #expect(jsonRejection(#"{"a":1,"a":2}"#) == .duplicateKey(JSONPath([.key("a")])))
        #expect(jsonRejection(#"{"x":{"y":[0,{"k":1,"k":1}]}}"#)
                == .duplicateKey(JSONPath([.key("x"), .key("y"), .index(1), .key("k")])))
    }

    @Test func keysAreComparedAfterTheirEscapes() {
        #expect(jsonRejection(#"{"version":1,"\u0076ersion":2}"#) == .duplicateKey(JSONPath([.key("version")])))
        #expect(jsonRejection(#"{"\/":1,"/":2}"#) == .duplicateKey(JSONPath([.key("/")])))
    }

    @Test func theFirstDuplicateInTheTextIsNamed() {
        #expect(jsonRejection(#"{"b":{"c":1,"c":2},"a":1,"a":2}"#) == .duplicateKey(JSONPath([.key("b"), .key("c")])))
    }

    @Test func sameKeyInDifferentObjectsIsFine() throws {
        #expect(try parseJSON(#"{"a":{"a":1},"b":{"a":2}}"#) == .object(["a": .object(["a": .integer(1)]), "b": .object(["a": .integer(2)])]))
    }

    @Test func keysDifferingInCaseAreDifferentKeys() throws {
        #expect(try parseJSON(#"{"a":1,"A":2}"#).objectValue?.count == 2)
    }

    @Test func canonicallyEquivalentKeysCountAsDuplicates() {
        // "é" precomposed and as e + combining accent: one key to a Swift dictionary, two to some JSON readers;
        // a document that says both means one of them is not what the reader takes, so it is refused.
        #expect(jsonRejection("{\"\u{e9}\":1,\"e\u{301}\":2}") == .duplicateKey(JSONPath([.key("\u{e9}")])))
    }

    @Test func pathPrintsKeysWithDotsAndIndexesInBrackets() {
        #expect(JSONPath([.key("origin"), .key("remoteRanges"), .index(2)]).description == "origin.remoteRanges[2]")
        #expect(JSONPath([.index(0), .key("a")]).description == "[0].a")
        #expect(JSONPath().description == "")
    }

    // MARK: Robustness

    /// Cuts and flips bytes of a document: every outcome is a value or a `JSONError`, never a trap, and the
    /// same each time.
    @Test func mutatedDocumentsNeverTrap() throws {
        var random = PolicyFuzzRandom(seed: 0x15_0e)
        let base = Array(#"{"a":[1,-2.5e3,"x\u00e9\ud83d\ude00\n",true,false,null],"b":{"c":{}}}"#.utf8)
        let alphabet = Array(#"{}[],:"\ 0123456789.eE+-truefalsnlu/abcdef"#.utf8) + [0, 0xff, 0xc3, 0xed, 0x0a]
        for _ in 0..<5000 {
            let bytes = random.mutated(base, from: alphabet)
            let first = Result { () throws(JSONError) in try JSONParser.parse(bytes) }
            let again = Result { () throws(JSONError) in try JSONParser.parse(bytes) }
            #expect(first == again)
            if case .success(let value) = first {
                #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value, "what was read writes back to itself")
            }
        }
    }
}
