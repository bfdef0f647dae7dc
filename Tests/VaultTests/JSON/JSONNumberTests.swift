import Testing
@testable import JSON

/// Numbers: whole numbers exact as `Int`, every other finite `Double` exactly as written, nothing beyond.
@Suite struct JSONNumberTests {
    @Test(arguments: [("0", 0), ("-0", 0), ("7", 7), ("-42", -42), ("1764412345", 1_764_412_345),
                      ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min)])
    func integersAreExact(text: String, expected: Int) throws {
        #expect(try parseJSON(text) == .integer(expected))
    }

    @Test(arguments: [("3.0", 3), ("1E2", 100), ("6e1", 60), ("1e+2", 100), ("-2.50e1", -25), ("12345e-2", nil),
                      ("0.0", 0), ("1.0e0", 1)] as [(String, Int?)])
    func wholeNumbersWrittenWithFractionOrExponentAreIntegers(text: String, expected: Int?) throws {
        let value = try parseJSON(text)
        if let expected {
            #expect(value == .integer(expected))
        } else {
            #expect(value == .number(123.45))
        }
    }

    @Test(arguments: [("1.5", 1.5), ("-0.25", -0.25), ("1e20", 1e20), ("1E-3", 0.001), ("2.5e-300", 2.5e-300),
                      ("9223372036854775808", 9_223_372_036_854_775_808.0),
                      ("1.7976931348623157e308", Double.greatestFiniteMagnitude), ("5e-324", Double.leastNonzeroMagnitude)])
    func otherNumbersAreDoubles(text: String, expected: Double) throws {
        #expect(try parseJSON(text) == .number(expected))
    }

    @Test func hugeIntegerIsADoubleNotAnError() throws {
        #expect(try parseJSON(String(repeating: "9", count: 300)) == .number(1e300))
    }

    @Test(arguments: ["1e400", "-1e400", "1e999999999999999999999", "123456789012345678901234567890e300",
                      "1.8e308", String(repeating: "9", count: 400)])
    func numberBeyondDoubleIsUnreadableAtItsPath(text: String) {
        #expect(jsonRejection(text) == .unreadableValue(JSONPath()))
        #expect(jsonRejection(#"{"rateLimit":{"failures":\#(text)}}"#)
                == .unreadableValue(JSONPath([.key("rateLimit"), .key("failures")])))
    }

    @Test func timestampsRoundTripExactly() throws {
        let times: [Double] = [1764412345.123456, 1764412399.5, 1800000123, 1800000000.000001, 0.1, 1e-7,
                               1764412345.1234567, 1.0 / 3.0, Double.pi * 1e9, Double.leastNonzeroMagnitude,
                               Double.greatestFiniteMagnitude, -1764412345.75]
        for time in times {
            let written = JSONWriter.bytes(JSONValue(time))
            let read = try JSONParser.parse(written)
            #expect(read.doubleValue == time, "\(time) wrote \(String(decoding: written, as: UTF8.self)) read \(read)")
            #expect(read.doubleValue?.bitPattern == time.bitPattern)
        }
    }

    @Test func randomDoublesRoundTripBitForBit() throws {
        var random = PolicyFuzzRandom(seed: 0xd0b1e)
        for _ in 0..<20_000 {
            let time = Double(bitPattern: random.next())
            guard time.isFinite, time != 0 else { continue }
            let read = try JSONParser.parse(JSONWriter.bytes(JSONValue(time)))
            #expect(read.doubleValue?.bitPattern == time.bitPattern, "\(time)")
        }
    }

    @Test func writtenNumbersAreShortestAndWithoutAFinalPointZero() {
        #expect(writtenJSON(JSONValue(1764412345.123456)) == "1764412345.123456")
        #expect(writtenJSON(JSONValue(1800000123)) == "1800000123")
        #expect(writtenJSON(.number(1800000123)) == "1800000123")
        #expect(writtenJSON(.number(0.1)) == "0.1")
        #expect(writtenJSON(.number(1e20)) == "1e+20")
        #expect(writtenJSON(.number(-2.5e-8)) == "-2.5e-08")
        #expect(writtenJSON(.integer(-42)) == "-42")
        #expect(writtenJSON(.integer(Int.min)) == "-9223372036854775808")
    }

    @Test func nonFiniteDoublesAreWrittenAsNull() {
        #expect(JSONValue(Double.infinity) == .null)
        #expect(writtenJSON(.number(.nan)) == "null")
        #expect(writtenJSON(.number(-.infinity)) == "null")
    }

    @Test func integersReadAsDoublesWhenADocumentWantsOne() throws {
        #expect(try parseJSON("1800000123").doubleValue == 1_800_000_123)
        #expect(try parseJSON("1.5").intValue == nil)
        #expect(try parseJSON("2147483648").int32Value == nil)
        #expect(try parseJSON("-2147483648").int32Value == Int32.min)
    }
}
