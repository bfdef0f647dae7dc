import FoundationEssentials

/// FoundationEssentials' `JSONDecoder` into `Decodable` structs of the three documents (without the strict
/// rules: unknown keys would need a second pass, so this is a lower bound of what it would cost).
enum Probe {
    static let name = "FoundationEssentials"

    struct Policy: Decodable {
        struct Origin: Decodable { var remoteRanges: [String]?; var nearbyRanges: [String]? }
        struct RateLimit: Decodable { var failures: Int?; var windowSeconds: Int?; var blockSeconds: Int? }
        struct SlotDefaults: Decodable { var allowSupply: Bool? }
        var version: Int
        var origin: Origin?
        var rateLimit: RateLimit?
        var slotDefaults: SlotDefaults?
    }

    struct Modes: Decodable {
        var version: Int
        var slots: [String: String]
    }

    struct RateLimit: Decodable {
        struct Pending: Decodable { var pid: Int32; var time: Double; var answered: Bool? }
        var version: Int
        var failures: [Double]
        var pending: [Pending]?
        var blockedUntil: Double?
    }

    static func mode(policy: [UInt8], modes: [UInt8], rateLimit: [UInt8], slot: String, expected: String) -> String? {
        let decoder = JSONDecoder()
        guard let p = try? decoder.decode(Policy.self, from: Data(policy)), p.version == 1,
              let r = try? decoder.decode(RateLimit.self, from: Data(rateLimit)), r.version == 1,
              let m = try? decoder.decode(Modes.self, from: Data(modes)), m.version == 1 else { return nil }
        return m.slots[slot]
    }
}
