import Testing
@testable import VaultRules

/// A protected vault's policy: root's, which the user's may tighten and never loosen.
@Suite struct RootPolicyTests {
    func policy(_ json: String) throws -> Policy {
        try Array(json.utf8).withUnsafeBytes { (raw) throws(VaultError) -> Policy in try Policy.parse(raw, path: "test") }
    }

    @Test func theUsersPolicyTightensAndNeverLoosens() throws {
        let root = try policy(#"{"version": 1, "rateLimit": {"failures": 5, "windowSeconds": 600, "blockSeconds": 60}, "gate": {"storeOver": false, "delete": true}, "prompt": {"askpassSeconds": 60}}"#)
        let looser = try policy(#"{"version": 1, "rateLimit": {"failures": 100, "windowSeconds": 1, "blockSeconds": 1}, "gate": {"storeOver": false, "delete": false}, "prompt": {"askpassSeconds": 3600}, "slotDefaults": {"allowSupply": true}, "origin": {"remoteRanges": ["100.64.0.0/10"], "nearbyRanges": ["0.0.0.0/0"]}}"#)
        let loosened = root.tightened(by: looser)
        #expect(loosened.rateLimit == root.rateLimit)
        #expect(loosened.gates == root.gates)
        #expect(loosened.askpassSeconds == 60)
        #expect(loosened.allowSupplyByDefault == false)
        #expect(loosened.nearbyRanges.isEmpty, "a nearby range only the user names is not nearby")
        #expect(loosened.remoteRanges == root.remoteRanges)

        let stricter = try policy(#"{"version": 1, "rateLimit": {"failures": 1, "windowSeconds": 3600, "blockSeconds": 86400}, "gate": {"storeOver": true}, "prompt": {"askpassSeconds": 10}, "origin": {"remoteRanges": ["10.9.0.0/16"], "nearbyRanges": ["10.0.0.0/8"]}}"#)
        let tightened = root.tightened(by: stricter)
        #expect(tightened.rateLimit == RateLimitPolicy(failures: 1, windowSeconds: 3600, blockSeconds: 86400))
        #expect(tightened.gates == .all)
        #expect(tightened.askpassSeconds == 10)
        #expect(tightened.remoteRanges.map(\.description).contains("10.9.0.0/16"))
        #expect(tightened.nearbyRanges.map(\.description) == ["10.0.0.0/8"])
    }

    @Test func theBuiltInPolicyTightenedByItselfIsItself() {
        #expect(Policy.builtIn.tightened(by: .builtIn) == .builtIn)
    }
}
