import Foundation
import Testing
@testable import VaultRules

/// Whatever the bytes, parsing ends in a policy or in one clean `.configuration` line, never in a trap.
@Suite struct PolicyRobustnessTests {
    @Test(arguments: ["", " ", "\n\t\r "])
    func emptyInputIsRejected(text: String) {
        #expect(policyRejection(text) == "not valid JSON (it is empty)")
    }

    @Test(arguments: ["version = 1", "{", "}", "{\"version\":1", "{'version':1}",
                      "{\"version\":01}", "{\"version\":1} {}", "{\"version\":1} // comment", "{\"version\":NaN}",
                      "{\"version\":-}",
                      "{\"version\":tru}", "\"unterminated", "[[[[", "]]]]", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}"])
    func nonJSONIsRejected(text: String) {
        #expect(policyRejection(text)?.hasPrefix("not valid JSON") == true)
    }

    @Test func trailingCommaIsRejectedWithItsLine() {
        // swift-foundation's JSONDecoder accepted these; strict JSON readers, JSONParser among them, do not.
        #expect(policyRejection(#"{"version":1,}"#) == #"not valid JSON (line 1 has a comma before a closing "}" or "]"; remove it)"#)
        #expect(policyRejection("{\"version\": 1,\n \"origin\": {\"remoteRanges\": [\"100.64.0.0/10\",\n ]}}")
                == #"not valid JSON (line 2 has a comma before a closing "}" or "]"; remove it)"#)
    }

    @Test func theFirstProblemInTheTextIsNamed() {
        // One pass from the top: the problem a person meets first when reading the file.
        #expect(policyRejection("{\"version\":1,\n\"origin\":{\"nearbyRanges\":[\"10.0.0.0/8\",]},\n\"version\":1}")
                == #"not valid JSON (line 2 has a comma before a closing "}" or "]"; remove it)"#)
        #expect(policyRejection(#"{"version":1,"version":1,"rateLimit":{"failures":1e400}}"#)
                == #"duplicate key "version"; keep only one (JSON readers disagree on which one counts)"#)
        #expect(policyRejection(#"{"version":1,"rateLimit":{"failures":1e400},"version":1}"#)
                == #"not valid JSON (the value of "rateLimit.failures" cannot be read: a number too large, or a string that is not valid)"#)
    }

    @Test func commasInsideStringsAreNotTrailingCommas() throws {
        #expect(policyRejection(#"{"version":1,"origin":{"remoteRanges":["10.0.0.0/8,]"]}}"#)?.hasPrefix(#""origin.remoteRanges[0]" is"#) == true)
    }

    @Test func nulBytesAreRejected() {
        let document = Array(#"{"version":1}"#.utf8)
        #expect(policyRejection(bytes: [0] + document)?.hasPrefix("not valid JSON") == true)
        #expect(policyRejection(bytes: document + [0])?.hasPrefix("not valid JSON") == true)
        #expect(policyRejection(bytes: [0, 0, 0])?.hasPrefix("not valid JSON") == true)
        let inString = Array(#"{"version":1,"origin":{"nearbyRanges":["10.0.0.0/8"#.utf8) + [0] + Array(#""]}}"#.utf8)
        #expect(policyRejection(bytes: inString)?.hasPrefix("not valid JSON") == true)
    }

    @Test func escapedNulInAStringIsJustABadRange() {
        #expect(policyRejection(#"{"version":1,"origin":{"nearbyRanges":["10.0.0.0/8\u0000"]}}"#)
                == #""origin.nearbyRanges[0]" is "10.0.0.0/8\u0000", not a CIDR range such as "100.64.0.0/10" or "fd7a:115c:a1e0::/48""#)
    }

    @Test func invalidUTF8IsRejected() {
        let bytes: [UInt8] = Array(#"{"version":1,""#.utf8) + [0xff, 0xfe] + Array(#"":1}"#.utf8)
        #expect(policyRejection(bytes: bytes)?.hasPrefix("not valid JSON") == true)
    }

    @Test(arguments: [33, 600, 30_000])
    func deepNestingIsRejected(depth: Int) {
        let text = #"{"version":1,"x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        #expect(policyRejection(text) == "not valid JSON for a policy (it nests deeper than 32 levels)")
    }

    @Test func unbalancedDeepNestingIsRejected() {
        #expect(policyRejection(String(repeating: "{\"a\":", count: 10_000))
                == "not valid JSON for a policy (it nests deeper than 32 levels)")
    }

    @Test func nestingUpToTheLimitIsOnlyAnUnknownKey() {
        // 1 for the document, 31 for the value: allowed by the depth check, so the unknown key is what is wrong.
        let text = #"{"version":1,"x":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect(policyRejection(text)?.hasPrefix(#"unknown key "x""#) == true)
    }

    @Test func bracketsInsideStringsDoNotCountAsNesting() {
        let text = #"{"version":1,"x":""# + String(repeating: "[{", count: 1000) + #"\""}"#
        #expect(policyRejection(text)?.hasPrefix(#"unknown key "x""#) == true)
    }

    @Test(arguments: ["1e400", "-1e400", "1e999999999999999999999", "123456789012345678901234567890e300"])
    func numbersBeyondDoubleAreRejected(number: String) {
        #expect(policyRejection(#"{"version":1,"rateLimit":{"failures":\#(number)}}"#)
                == #"not valid JSON (the value of "rateLimit.failures" cannot be read: a number too large, or a string that is not valid)"#)
    }

    @Test func hugeIntegerIsOutOfRange() {
        #expect(policyRejection(#"{"version":1,"rateLimit":{"blockSeconds":\#(String(repeating: "9", count: 300))}}"#)
                == #""rateLimit.blockSeconds" must be a whole number of seconds from 1 to 86400"#)
    }

    @Test func documentOverSixtyFourKiBIsRejected() {
        let document = Array(#"{"version":1}"#.utf8)
        let padded = document + [UInt8](repeating: 0x20, count: 64 * 1024 + 1 - document.count)

        #expect(policyRejection(bytes: padded) == "it is larger than 64 KiB, more than any policy needs")
    }

    @Test func documentOfExactlySixtyFourKiBIsRead() throws {
        let document = Array(#"{"version":1}"#.utf8)
        let padded = document + [UInt8](repeating: 0x20, count: 64 * 1024 - document.count)

        #expect(try parsePolicy(bytes: padded) == Policy.builtIn)
    }

    @Test func byteOrderMarkIsTolerated() throws {
        // JSONParser skips a UTF-8 byte order mark (as JSONDecoder did); editors on some systems write one.
        #expect(try parsePolicy(bytes: [0xef, 0xbb, 0xbf] + Array(#"{"version":1}"#.utf8)) == Policy.builtIn)
    }

    /// Cuts, splices and flips bytes of the default document; every outcome must be a policy or a clean error.
    @Test func mutatedDocumentsNeverTrap() throws {
        var random = PolicyFuzzRandom(seed: 0x5eed)
        let path = "\(policyRepositoryRoot())/policy/default.json"
        let base = Array(try #require(FileManager.default.contents(atPath: path), "no \(path)"))
        let alphabet = Array(#"{}[],:"\ 0123456789.eE+-truefalsnl/abcdef"#.utf8) + [0, 0xff, 0xc3, 0x0a]
        var accepted = 0
        for _ in 0..<3000 {
            let bytes = random.mutated(base, from: alphabet)
            do {
                _ = try parsePolicy(bytes: bytes)
                accepted += 1
            } catch {
                guard case .configuration(let path, let detail) = error else {
                    Issue.record("not a configuration error: \(error)")
                    continue
                }
                #expect(path == policyTestPath)
                #expect(!detail.isEmpty && !detail.contains("\n"))
            }
        }
        #expect(accepted < 3000)
    }
}

/// A small seeded generator, so a failing mutation can be found again.
struct PolicyFuzzRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e3779b97f4a7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58476d1ce4e5b9
        z = (z ^ (z >> 27)) &* 0x94d049bb133111eb
        return z ^ (z >> 31)
    }

    /// `base` with one to four random edits: a byte replaced or inserted (from `alphabet`), one removed, or
    /// the rest cut off.
    mutating func mutated(_ base: [UInt8], from alphabet: [UInt8]) -> [UInt8] {
        var bytes = base
        for _ in 0..<Int.random(in: 1...4, using: &self) {
            let at = Int.random(in: 0...bytes.count, using: &self)
            switch Int.random(in: 0..<4, using: &self) {
            case 0 where at < bytes.count: bytes[at] = alphabet.randomElement(using: &self) ?? 0
            case 1 where at < bytes.count: bytes.remove(at: at)
            case 2: bytes.insert(alphabet.randomElement(using: &self) ?? 0, at: at)
            default: bytes = Array(bytes[..<at])
            }
        }
        return bytes
    }
}
