import Testing
@testable import JSON

/// The writer: the same bytes for the same value, sorted keys, and the two layouts.
@Suite struct JSONWriterTests {
    @Test func compactIsOneLineWithoutSpaces() {
        let value = JSONValue.object(["b": .array([.bool(true), .null, .integer(1)]), "a": .string("x"), "c": .object([:])])
        #expect(writtenJSON(value) == #"{"a":"x","b":[true,null,1],"c":{}}"#)
    }

    @Test func keysAreSortedByTheirUTF8Bytes() {
        let value = JSONValue.object(["b": .null, "a10": .null, "a9": .null, "B": .null, "_": .null, "é": .null, "a": .null])
        #expect(writtenJSON(value) == #"{"B":null,"_":null,"a":null,"a10":null,"a9":null,"b":null,"é":null}"#)
    }

    @Test func prettyIsTheModeRecordLayout() {
        let value = JSONValue.object(["version": .integer(1),
                                      "slots": .object(["wifi": .string("device"), "github": .string("sync")])])
        #expect(writtenJSON(value, style: .pretty) == """
            {
              "slots" : {
                "github" : "sync",
                "wifi" : "device"
              },
              "version" : 1
            }
            """)
    }

    @Test func prettyArraysAndEmptyContainers() {
        let value = JSONValue.object(["a": .array([.integer(1), .array([])]), "b": .object([:])])
        #expect(writtenJSON(value, style: .pretty) == "{\n  \"a\" : [\n    1,\n    []\n  ],\n  \"b\" : {}\n}")
    }

    @Test func theSameValueAlwaysGivesTheSameBytes() {
        var members: [String: JSONValue] = [:]
        for i in 0..<200 { members["k\(i)"] = .integer(i) }
        let first = JSONWriter.bytes(.object(members))
        for _ in 0..<5 {
            #expect(JSONWriter.bytes(.object(Dictionary(uniqueKeysWithValues: members.shuffled()))) == first)
        }
    }

    @Test func whatIsWrittenReadsBackEqual() throws {
        let value = JSONValue.object([
            "version": .integer(1), "failures": .array([JSONValue(1764412345.123456), JSONValue(1764412399.5)]),
            "nested": .object(["deep": .array([.array([.object(["x": .null])])])]), "text": .string("a/b \"c\" \u{1}"),
            "flags": .array([.bool(true), .bool(false)]), "big": .integer(Int.max), "small": .number(-1.25e-10),
        ])
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
        #expect(try JSONParser.parse(JSONWriter.bytes(value, style: .pretty)) == value)
    }
}
