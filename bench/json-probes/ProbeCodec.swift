/// vaultctl's own codec (Sources/JSON, compiled in by the benchmark): the policy and the rate limit
/// parsed whole into `JSONValue`, the mode record's entry found with `JSONParser.values(at:in:)` as
/// `ModeRecord.hint(for:)` does.
enum Probe {
    static let name = "codec"

    static func mode(policy: [UInt8], modes: [UInt8], rateLimit: [UInt8], slot: String, expected: String) -> String? {
        guard let p = try? JSONParser.parse(policy), p["version"]?.intValue == 1,
              let r = try? JSONParser.parse(rateLimit), r["version"]?.intValue == 1,
              let found = try? JSONParser.values(at: [["version"], ["slots", slot]], in: modes),
              found[0]?.intValue == 1 else { return nil }
        return found[1]?.stringValue
    }
}
