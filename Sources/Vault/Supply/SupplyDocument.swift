import GateProtocol
import VaultRules

import JSON

extension SupplyState {
    /// The contents of `supply.json`: `{"version": 1, "slots": {"NAME": {"allowed": BOOL, "lastSupply":
    /// {"time": TIME, "origin": TEXT}}, …}}`; a slot's fields are left out when they were never set.
    struct Document: JSONDocument {
        var version = 1
        var slots: [String: Entry] = [:]

        init() {}

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the supply state")
            version = try fields.required("version", \.intValue)
            slots = try fields.required("slots") { (value) throws(JSONError) in
                try value.dictionary { (entry) throws(JSONError) in try Entry(json: entry) }
            }
        }

        package var json: JSONValue {
            .object(["version": .integer(version), "slots": .object(slots.mapValues(\.json))])
        }
    }

    /// One slot's setting and last supply.
    struct Entry: JSONDocument {
        var allowed: Bool?
        var lastSupply: LastSupply?

        init(allowed: Bool? = nil, lastSupply: LastSupply? = nil) {
            self.allowed = allowed
            self.lastSupply = lastSupply
        }

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "a slot's supply state")
            allowed = try fields.optional("allowed", \.boolValue)
            lastSupply = try fields.optional("lastSupply") { (value) throws(JSONError) in try LastSupply(json: value) }
        }

        package var json: JSONValue {
            .object(dropping: ["allowed": allowed.map(JSONValue.bool), "lastSupply": lastSupply.map(\.json)])
        }
    }
}

extension SupplyState.LastSupply: JSONDocument {
    package init(json: JSONValue) throws(JSONError) {
        let fields = try JSONFields(json, "a last supply")
        time = try fields.required("time", \.doubleValue)
        origin = try fields.required("origin", \.stringValue)
        rejected = try fields.optional("rejected", \.boolValue) ?? false
    }

    package var json: JSONValue {
        .object(dropping: ["time": JSONValue(time), "origin": .string(origin), "rejected": rejected ? .bool(true) : nil])
    }
}
