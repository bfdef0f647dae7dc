import Foundation
import Testing
@testable import JSON
@testable import VaultRules

@Suite struct PolicyParseTests {
    // MARK: The default

    @Test func defaultFileParsesToBuiltIn() throws {
        let path = "\(policyRepositoryRoot())/policy/default.json"
        let bytes = try #require(FileManager.default.contents(atPath: path), "no \(path)")

        #expect(try parsePolicy(bytes: Array(bytes)) == Policy.builtIn)
    }

    /// The shipped `policy/default.json`, read over a policy unlike `builtIn` in every field, gives `builtIn`
    /// field by field: the file writes out every field, each with the built-in value, so the two cannot drift.
    @Test func defaultFileWritesOutEveryFieldOfBuiltIn() throws {
        let path = "\(policyRepositoryRoot())/policy/default.json"
        let bytes = try #require(FileManager.default.contents(atPath: path), "no \(path)")
        let builtIn = Policy.builtIn
        let unlike = Policy(
            remoteRanges: [try #require(IPRange("192.0.2.0/24"))], nearbyRanges: [],
            rateLimit: RateLimitPolicy(failures: builtIn.rateLimit.failures + 1,
                                       windowSeconds: builtIn.rateLimit.windowSeconds + 1,
                                       blockSeconds: builtIn.rateLimit.blockSeconds + 1),
            allowSupplyByDefault: !builtIn.allowSupplyByDefault,
            askpassSeconds: builtIn.askpassSeconds + 1, authenticationSeconds: builtIn.authenticationSeconds + 1,
            gates: ChangeGates(storeOver: !builtIn.gates.storeOver, delete: !builtIn.gates.delete))
        #expect(unlike.remoteRanges != builtIn.remoteRanges && unlike.nearbyRanges != builtIn.nearbyRanges)

        let shipped = try PolicyParser.read(try JSONParser.parse(Array(bytes), maximumDepth: PolicyParser.maximumDepth),
                                            over: unlike)

        #expect(shipped.remoteRanges == builtIn.remoteRanges)
        #expect(shipped.nearbyRanges == builtIn.nearbyRanges)
        #expect(shipped.rateLimit.failures == builtIn.rateLimit.failures)
        #expect(shipped.rateLimit.windowSeconds == builtIn.rateLimit.windowSeconds)
        #expect(shipped.rateLimit.blockSeconds == builtIn.rateLimit.blockSeconds)
        #expect(shipped.allowSupplyByDefault == builtIn.allowSupplyByDefault)
        #expect(shipped.askpassSeconds == builtIn.askpassSeconds)
        #expect(shipped.authenticationSeconds == builtIn.authenticationSeconds)
        #expect(shipped.gates.storeOver == builtIn.gates.storeOver)
        #expect(shipped.gates.delete == builtIn.gates.delete)
        #expect(shipped == builtIn)
    }

    @Test func builtInHoldsTheDocumentedValues() {
        let policy = Policy.builtIn
        #expect(policy.remoteRanges.map(\.description) == ["100.64.0.0/10", "fd7a:115c:a1e0::/48"])
        #expect(policy.nearbyRanges.map(\.description) == ["10.0.0.0/8", "172.16.0.0/12",
                                                           "192.168.0.0/16", "169.254.0.0/16", "fe80::/10", "fc00::/7"])
        #expect(policy.rateLimit == RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300))
        #expect(policy.allowSupplyByDefault == false)
        #expect(policy.askpassSeconds == 120)
        #expect(policy.authenticationSeconds == 180)
        #expect(policy.gates == ChangeGates(storeOver: true, delete: true))
    }

    // MARK: Optional sections

    @Test func versionAloneGivesBuiltInValues() throws {
        #expect(try parsePolicy(#"{"version":1}"#) == Policy.builtIn)
        #expect(try parsePolicy(#"{"version":1,"origin":{},"rateLimit":{},"slotDefaults":{}}"#) == Policy.builtIn)
    }

    @Test func partialRateLimitChangesOnlyThatField() throws {
        let policy = try parsePolicy(#"{"version":1,"rateLimit":{"failures":5}}"#)

        var expected = Policy.builtIn
        expected.rateLimit.failures = 5
        #expect(policy == expected)
    }

    @Test func partialOriginChangesOnlyThatList() throws {
        let policy = try parsePolicy(#"{"version":1,"origin":{"nearbyRanges":["192.168.1.0/24"]}}"#)

        var expected = Policy.builtIn
        expected.nearbyRanges = [try #require(IPRange("192.168.1.0/24"))]
        #expect(policy == expected)
        #expect(policy.remoteRanges == Policy.builtIn.remoteRanges)
    }

    @Test func everyFieldCanBeOverridden() throws {
        let policy = try parsePolicy("""
            {"version": 1,
             "origin": {"remoteRanges": ["100.100.0.0/16"], "nearbyRanges": []},
             "rateLimit": {"failures": 100, "windowSeconds": 1, "blockSeconds": 86400},
             "slotDefaults": {"allowSupply": true}}
            """)

        #expect(policy.remoteRanges.map(\.description) == ["100.100.0.0/16"])
        #expect(policy.nearbyRanges.isEmpty)
        #expect(policy.rateLimit == RateLimitPolicy(failures: 100, windowSeconds: 1, blockSeconds: 86400))
        #expect(policy.allowSupplyByDefault)
    }

    @Test func wholeValuedDecimalCountsAsWholeNumber() throws {
        // JSONParser reads 3.0 and 3e0 as the integer 3 (as JSONDecoder did); the policy accepts what is mathematically whole.
        #expect(try parsePolicy(#"{"version":1.0,"rateLimit":{"failures":3.0,"windowSeconds":6e1}}"#).rateLimit
                == RateLimitPolicy(failures: 3, windowSeconds: 60, blockSeconds: 300))
    }

    // MARK: Unknown keys

    @Test func unknownTopLevelKeyRejectsWholeDocument() {
        let detail = policyRejection(#"{"version":1,"rateLimit":{"failures":9},"colour":"blue"}"#)

        #expect(detail == #"unknown key "colour"; remove it or fix its spelling (this vaultctl knows: version, origin, rateLimit, slotDefaults, prompt, gate)"#)
    }

    @Test func unknownRateLimitKeyNamesItsPath() {
        let detail = policyRejection(#"{"version":1,"rateLimit":{"failurez":3}}"#)

        #expect(detail == #"unknown key "rateLimit.failurez"; remove it or fix its spelling (this vaultctl knows: failures, windowSeconds, blockSeconds)"#)
    }

    @Test func unknownOriginKeyNamesItsPath() {
        let detail = policyRejection(#"{"version":1,"origin":{"remoteRanges":["100.64.0.0/10"],"farRanges":[]}}"#)

        #expect(detail == #"unknown key "origin.farRanges"; remove it or fix its spelling (this vaultctl knows: remoteRanges, nearbyRanges)"#)
    }

    @Test func unknownSlotDefaultsKeyNamesItsPath() {
        let detail = policyRejection(#"{"version":1,"slotDefaults":{"allowSupply":false,"allowRead":true}}"#)

        #expect(detail == #"unknown key "slotDefaults.allowRead"; remove it or fix its spelling (this vaultctl knows: allowSupply)"#)
    }

    @Test func keysAreCaseSensitive() {
        #expect(policyRejection(#"{"version":1,"RateLimit":{}}"#)?.hasPrefix(#"unknown key "RateLimit""#) == true)
        #expect(policyRejection(#"{"Version":1}"#)?.hasPrefix(#""version" is missing"#) == true)
    }

    @Test func firstUnknownKeyInSortedOrderIsNamed() {
        #expect(policyRejection(#"{"version":1,"zeta":1,"alpha":2,"mid":3}"#)?.hasPrefix(#"unknown key "alpha""#) == true)
    }

    @Test func unknownKeyWithControlCharactersStaysOnOneLine() {
        let detail = policyRejection("{\"version\":1,\"a\\nb\\u0000c\\u2028\":1}")

        #expect(detail?.hasPrefix(#"unknown key "a\nb\u0000c\u2028""#) == true)
    }

    @Test func longUnknownKeyIsCut() throws {
        let key = String(repeating: "k", count: 5000)
        let detail = try #require(policyRejection(#"{"version":1,"\#(key)":1}"#))

        #expect(detail.count < 300)
        #expect(detail.contains("…"))
    }

    // MARK: Version

    @Test func missingVersionIsRejected() {
        #expect(policyRejection(#"{"rateLimit":{"failures":3}}"#)
                == #""version" is missing; add "version": 1 (it reads version 1)"#)
        #expect(policyRejection("{}")?.hasPrefix(#""version" is missing"#) == true)
    }

    @Test(arguments: ["0", "2", "-1", "1.5", "100000000000000000000"])
    func otherVersionNumbersAreRejected(version: String) {
        let detail = policyRejection(#"{"version":\#(version)}"#)

        #expect(detail?.hasPrefix("version ") == true)
        #expect(detail?.hasSuffix(" is not one this vaultctl reads (it reads version 1)") == true)
    }

    @Test func versionTwoNamesItself() {
        #expect(policyRejection(#"{"version":2,"whatever":{"x":1}}"#)
                == "version 2 is not one this vaultctl reads (it reads version 1)")
    }

    @Test(arguments: [#""1""#, "true", "null", "[1]", #"{"major":1}"#])
    func versionThatIsNotANumberIsRejected(version: String) {
        let detail = policyRejection(#"{"version":\#(version)}"#)

        #expect(detail?.hasPrefix(#""version" must be the number 1, not "#) == true)
    }

    // MARK: Types

    @Test(arguments: [
        (#"{"version":1,"origin":["100.64.0.0/10"]}"#, #""origin" must be an object, not an array"#),
        (#"{"version":1,"rateLimit":"strict"}"#, #""rateLimit" must be an object, not a string"#),
        (#"{"version":1,"slotDefaults":null}"#, #""slotDefaults" must be an object, not null"#),
        (#"{"version":1,"rateLimit":{"failures":"3"}}"#, #""rateLimit.failures" must be a whole number from 1 to 100"#),
        (#"{"version":1,"rateLimit":{"windowSeconds":null}}"#, #""rateLimit.windowSeconds" must be a whole number of seconds from 1 to 86400"#),
        (#"{"version":1,"rateLimit":{"blockSeconds":true}}"#, #""rateLimit.blockSeconds" must be a whole number of seconds from 1 to 86400"#),
        (#"{"version":1,"slotDefaults":{"allowSupply":"false"}}"#, #""slotDefaults.allowSupply" must be true or false, not a string"#),
        (#"{"version":1,"slotDefaults":{"allowSupply":0}}"#, #""slotDefaults.allowSupply" must be true or false, not a number"#),
        (#"{"version":1,"origin":{"remoteRanges":"100.64.0.0/10"}}"#, #""origin.remoteRanges" must be an array of CIDR ranges such as "100.64.0.0/10", not a string"#),
        (#"{"version":1,"origin":{"nearbyRanges":[10]}}"#, #""origin.nearbyRanges[0]" must be a CIDR range such as "100.64.0.0/10" written as a string, not a number"#),
        (#"{"version":1,"origin":{"nearbyRanges":["10.0.0.0/8",["127.0.0.0/8"]]}}"#, #""origin.nearbyRanges[1]" must be a CIDR range such as "100.64.0.0/10" written as a string, not an array"#),
        ("[1]", #"the document must be a JSON object such as {"version": 1}, not an array"#),
        (#""version""#, #"the document must be a JSON object such as {"version": 1}, not a string"#),
        ("1", #"the document must be a JSON object such as {"version": 1}, not a number"#),
        ("null", #"the document must be a JSON object such as {"version": 1}, not null"#),
    ])
    func wrongTypesAreRejected(document: String, expected: String) {
        #expect(policyRejection(document) == expected)
    }

    // MARK: Ranges of numbers

    @Test(arguments: ["0", "101", "-1", "1.5", "1e20", "-9223372036854775808", "9223372036854775807"])
    func failuresOutOfRangeAreRejected(value: String) {
        #expect(policyRejection(#"{"version":1,"rateLimit":{"failures":\#(value)}}"#)
                == #""rateLimit.failures" must be a whole number from 1 to 100"#)
    }

    @Test(arguments: ["windowSeconds", "blockSeconds"], ["0", "86401", "-300", "0.5"])
    func secondsOutOfRangeAreRejected(field: String, value: String) {
        #expect(policyRejection(#"{"version":1,"rateLimit":{"\#(field)":\#(value)}}"#)
                == #""rateLimit.\#(field)" must be a whole number of seconds from 1 to 86400"#)
    }

    @Test func boundsAreAccepted() throws {
        let low = try parsePolicy(#"{"version":1,"rateLimit":{"failures":1,"windowSeconds":1,"blockSeconds":1}}"#)
        let high = try parsePolicy(#"{"version":1,"rateLimit":{"failures":100,"windowSeconds":86400,"blockSeconds":86400}}"#)

        #expect(low.rateLimit == RateLimitPolicy(failures: 1, windowSeconds: 1, blockSeconds: 1))
        #expect(high.rateLimit == RateLimitPolicy(failures: 100, windowSeconds: 86400, blockSeconds: 86400))
    }

    // MARK: CIDR ranges

    @Test(arguments: ["10.0.0.0/33", "10.0.0.0", "fe80::/129", "not-a-range", "", "10.0.0.0/-1", " 10.0.0.0/8",
                      "10.0.0.0/8 ", "10.0.0/8", "256.0.0.0/8", "10.0.0.0/", "/8", "10.0.0.0/8/8", "fe80:::/10",
                      "1:2:3:4:5:6:7:8:9/64", "10.0.0.0/08x", "10.0.0.0/99999999999999999999999"])
    func invalidRangesAreRejected(range: String) {
        let detail = policyRejection(#"{"version":1,"origin":{"nearbyRanges":["127.0.0.0/8","\#(range)"]}}"#)

        #expect(detail?.hasPrefix(#""origin.nearbyRanges[1]" is "#) == true)
        #expect(detail?.hasSuffix(#", not a CIDR range such as "100.64.0.0/10" or "fd7a:115c:a1e0::/48""#) == true)
    }

    @Test func invalidRangeIsQuotedInTheMessage() {
        #expect(policyRejection(#"{"version":1,"origin":{"remoteRanges":["100.64.0.0/33"]}}"#)
                == #""origin.remoteRanges[0]" is "100.64.0.0/33", not a CIDR range such as "100.64.0.0/10" or "fd7a:115c:a1e0::/48""#)
    }

    @Test func emptyRemoteRangesAreRejected() {
        #expect(policyRejection(#"{"version":1,"origin":{"remoteRanges":[]}}"#)
                == #""origin.remoteRanges" must list at least one range; leave it out to use the built-in ones"#)
    }

    @Test func emptyNearbyRangesAreAccepted() throws {
        #expect(try parsePolicy(#"{"version":1,"origin":{"nearbyRanges":[]}}"#).nearbyRanges.isEmpty)
    }

    @Test func tooManyRangesAreRejected() {
        let ranges = (0..<257).map { #""10.\#($0 / 256).\#($0 % 256).0/24""# }.joined(separator: ",")

        #expect(policyRejection(#"{"version":1,"origin":{"nearbyRanges":[\#(ranges)]}}"#)
                == #""origin.nearbyRanges" lists 257 ranges; at most 256 are allowed"#)
    }

    @Test func parsedRangesMatchAddresses() throws {
        let policy = try parsePolicy(#"{"version":1,"origin":{"remoteRanges":["100.64.0.0/10"],"nearbyRanges":["::ffff:0:0/96"]}}"#)

        #expect(policy.remoteRanges.first?.contains(try #require(IPAddress("100.100.1.2"))) == true)
        #expect(policy.remoteRanges.first?.contains(try #require(IPAddress("::ffff:100.100.1.2"))) == true)
        #expect(policy.remoteRanges.first?.contains(try #require(IPAddress("100.128.0.1"))) == false)
    }

    // MARK: Duplicate keys

    @Test func duplicateTopLevelKeyIsRejected() {
        // JSONDecoder kept the first value silently; JSONParser refuses the document.
        #expect(policyRejection(#"{"version":1,"slotDefaults":{"allowSupply":false},"slotDefaults":{"allowSupply":true}}"#)
                == #"duplicate key "slotDefaults"; keep only one (JSON readers disagree on which one counts)"#)
    }

    @Test func duplicateNestedKeyNamesItsPath() {
        #expect(policyRejection(#"{"version":1,"rateLimit":{"failures":3,"windowSeconds":60,"failures":50}}"#)
                == #"duplicate key "rateLimit.failures"; keep only one (JSON readers disagree on which one counts)"#)
    }

    @Test func duplicateKeySpelledWithEscapesIsRejected() {
        #expect(policyRejection(#"{"version":1,"\u0076ersion":1}"#)?.hasPrefix(#"duplicate key "version""#) == true)
    }

    @Test func sameKeyInDifferentObjectsIsFine() throws {
        #expect(try parsePolicy(#"{"version":1,"origin":{"remoteRanges":["100.64.0.0/10"]},"rateLimit":{"failures":4}}"#)
                .rateLimit.failures == 4)
    }

    @Test func duplicateInsideAnArrayElementIsFound() {
        // Not a valid policy either way, but the duplicate is reported first, with its path.
        #expect(policyRejection(#"{"version":1,"origin":{"nearbyRanges":[{"a":1,"a":2}]}}"#)
                == #"duplicate key "origin.nearbyRanges[0].a"; keep only one (JSON readers disagree on which one counts)"#)
    }

    @Test func keyLikeStringsInValuesAreNotKeys() throws {
        #expect(try parsePolicy(#"{"version":1,"origin":{"nearbyRanges":["10.0.0.0/8","10.0.0.0/8"]}}"#)
                .nearbyRanges.count == 2)
    }
}

extension PolicyParseTests {
    /// `prompt.askpassSeconds`: how long an askpass program has to answer, 1...3600 s (120 by default).
    @Test func askpassSecondsIsReadAndBounded() throws {
        #expect(Policy.builtIn.askpassSeconds == 120)
        let policy = try parsePolicy(#"{"version":1,"prompt":{"askpassSeconds":30}}"#)
        #expect(policy.askpassSeconds == 30)
        #expect(policyRejection(#"{"version":1,"prompt":{"askpassSeconds":0}}"#)?.contains("prompt.askpassSeconds") == true)
        #expect(policyRejection(#"{"version":1,"prompt":{"askpasSeconds":5}}"#)?.contains("prompt.askpasSeconds") == true)
    }

    /// `prompt.authenticationSeconds`: one bound on a whole authentication (a finger, a key), 10...3600 s (180
    /// by default), which a user's policy may shorten and never lengthen behind the gate.
    @Test func authenticationSecondsIsReadBoundedAndOnlyTightened() throws {
        #expect(Policy.builtIn.authenticationSeconds == 180)
        let policy = try parsePolicy(#"{"version":1,"prompt":{"authenticationSeconds":20}}"#)
        #expect(policy.authenticationSeconds == 20 && policy.askpassSeconds == 120)
        #expect(policyRejection(#"{"version":1,"prompt":{"authenticationSeconds":9}}"#)?.contains("prompt.authenticationSeconds") == true)
        #expect(policyRejection(#"{"version":1,"prompt":{"authenticationSeconds":3601}}"#)?.contains("prompt.authenticationSeconds") == true)
        let longer = try parsePolicy(#"{"version":1,"prompt":{"authenticationSeconds":600}}"#)
        #expect(Policy.builtIn.tightened(by: longer).authenticationSeconds == 180)
        #expect(Policy.builtIn.tightened(by: policy).authenticationSeconds == 20)
    }
}
