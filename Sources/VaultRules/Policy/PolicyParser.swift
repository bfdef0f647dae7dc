import JSON

extension Policy {
    /// Parses a whole document; any unknown key / version / bad value throws, naming the key path (e.g. "rateLimit.failurez").
    ///
    /// Throws `.configuration(path:detail:)` with `path` as given and a one-line `detail` (no final period),
    /// such as `unknown key "rateLimit.failurez"; remove it or fix its spelling (this vaultctl knows:
    /// failures, windowSeconds, blockSeconds)`. The checks run in this order: size, then the JSON itself
    /// (`JSONParser`, which stops at the first problem in the text: a syntax error, a comma before a closing
    /// bracket, nesting deeper than 32 levels, a duplicate key, a number or string that cannot be read),
    /// then `version`, then each level's unknown keys before its values. When several keys are unknown at
    /// one level, the first in sorted order is named. Never traps, whatever the bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws(VaultError) -> Policy {
        do {
            return try PolicyParser.parse(bytes)
        } catch {
            throw .configuration(path: path, detail: error.detail)
        }
    }
}

/// Why a document was rejected, in the words of `VaultError.configuration`'s detail.
package struct PolicyProblem: Error {
    package let detail: String
}

/// Reads a policy document: the raw checks, then the JSON value against the version 1 shape by hand.
package enum PolicyParser {
    package static let topKeys = ["version", "origin", "rateLimit", "slotDefaults", "prompt", "gate"]
    package static let originKeys = ["remoteRanges", "nearbyRanges"]
    package static let rateLimitKeys = ["failures", "windowSeconds", "blockSeconds"]
    package static let slotDefaultsKeys = ["allowSupply"]
    package static let promptKeys = ["askpassSeconds", "authenticationSeconds"]
    package static let gateKeys = ["storeOver", "delete"]

    /// Deepest nesting of arrays and objects a document may have (the document's own object is level 1).
    package static let maximumDepth = 32

    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(PolicyProblem) -> Policy {
        guard bytes.count <= Policy.maximumDocumentSize else {
            throw PolicyProblem(detail: "it is larger than 64 KiB, more than any policy needs")
        }
        guard bytes.contains(where: { !isWhitespace($0) }) else {
            throw PolicyProblem(detail: "not valid JSON (it is empty)")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        } catch {
            throw PolicyProblem(detail: detail(error))
        }
        return try read(value)
    }

    /// The words for a document that is not JSON, or not JSON that every reader reads alike.
    private static func detail(_ error: JSONError) -> String {
        switch error {
        case .tooDeep:
            return "not valid JSON for a policy (it nests deeper than \(maximumDepth) levels)"
        case .trailingComma(let line):
            return "not valid JSON (line \(line) has a comma before a closing \"}\" or \"]\"; remove it)"
        case .duplicateKey(let path):
            return "duplicate key \(quoted(path.description)); keep only one (JSON readers disagree on which one counts)"
        case .unreadableValue(let path) where !path.isEmpty:
            return "not valid JSON (the value of \(quoted(path.description)) cannot be read: a number too large, or a string that is not valid)"
        case .syntax, .unreadableValue, .mismatch:
            return "not valid JSON"
        }
    }

    /// The version 1 shape; starts from `base` and replaces each field the document gives. Only a test
    /// starts from another policy than `builtIn`: one that differs in every field shows which fields a
    /// document leaves out (`policy/default.json` must leave none).
    package static func read(_ value: JSONValue, over base: Policy = .builtIn) throws(PolicyProblem) -> Policy {
        guard case .object(let top) = value else {
            throw PolicyProblem(detail: "the document must be a JSON object such as {\"version\": \(Policy.version)}, not \(value.kind)")
        }
        try checkVersion(top["version"])
        try rejectUnknownKeys(top, known: topKeys, at: "")

        var policy = base
        if let origin = top["origin"] {
            let members = try object(origin, at: "origin")
            try rejectUnknownKeys(members, known: originKeys, at: "origin")
            if let ranges = members["remoteRanges"] {
                policy.remoteRanges = try rangeList(ranges, at: "origin.remoteRanges", mayBeEmpty: false)
            }
            if let ranges = members["nearbyRanges"] {
                policy.nearbyRanges = try rangeList(ranges, at: "origin.nearbyRanges", mayBeEmpty: true)
            }
        }
        if let rateLimit = top["rateLimit"] {
            let members = try object(rateLimit, at: "rateLimit")
            try rejectUnknownKeys(members, known: rateLimitKeys, at: "rateLimit")
            if let v = members["failures"] {
                policy.rateLimit.failures = try wholeNumber(v, in: 1...100, at: "rateLimit.failures", unit: "")
            }
            if let v = members["windowSeconds"] {
                policy.rateLimit.windowSeconds = try wholeNumber(v, in: 1...86400, at: "rateLimit.windowSeconds",
                                                                 unit: " of seconds")
            }
            if let v = members["blockSeconds"] {
                policy.rateLimit.blockSeconds = try wholeNumber(v, in: 1...86400, at: "rateLimit.blockSeconds",
                                                                unit: " of seconds")
            }
        }
        if let slotDefaults = top["slotDefaults"] {
            let members = try object(slotDefaults, at: "slotDefaults")
            try rejectUnknownKeys(members, known: slotDefaultsKeys, at: "slotDefaults")
            if let v = members["allowSupply"] {
                guard case .bool(let allow) = v else {
                    throw PolicyProblem(detail: "\(quoted("slotDefaults.allowSupply")) must be true or false, not \(v.kind)")
                }
                policy.allowSupplyByDefault = allow
            }
        }
        if let prompt = top["prompt"] {
            let members = try object(prompt, at: "prompt")
            try rejectUnknownKeys(members, known: promptKeys, at: "prompt")
            if let v = members["askpassSeconds"] {
                policy.askpassSeconds = try wholeNumber(v, in: 1...3600, at: "prompt.askpassSeconds", unit: " of seconds")
            }
            if let v = members["authenticationSeconds"] {
                policy.authenticationSeconds = try wholeNumber(v, in: 10...3600, at: "prompt.authenticationSeconds", unit: " of seconds")
            }
        }
        if let gate = top["gate"] {
            let members = try object(gate, at: "gate")
            try rejectUnknownKeys(members, known: gateKeys, at: "gate")
            if let v = members["storeOver"] { policy.gates.storeOver = try boolean(v, at: "gate.storeOver") }
            if let v = members["delete"] { policy.gates.delete = try boolean(v, at: "gate.delete") }
        }
        return policy
    }

    private static func boolean(_ value: JSONValue, at keyPath: String) throws(PolicyProblem) -> Bool {
        guard case .bool(let b) = value else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) must be true or false, not \(value.kind)")
        }
        return b
    }

    private static func checkVersion(_ value: JSONValue?) throws(PolicyProblem) {
        let reads = "it reads version \(Policy.version)"
        switch value {
        case nil:
            throw PolicyProblem(detail: "\(quoted("version")) is missing; add \"version\": \(Policy.version) (\(reads))")
        case .integer(let v)?:
            guard v == Policy.version else {
                throw PolicyProblem(detail: "version \(v) is not one this vaultctl reads (\(reads))")
            }
        case .number(let v)?:
            throw PolicyProblem(detail: "version \(v) is not one this vaultctl reads (\(reads))")
        case let other?:
            throw PolicyProblem(detail: "\(quoted("version")) must be the number \(Policy.version), not \(other.kind) (\(reads))")
        }
    }

    private static func rejectUnknownKeys(_ members: [String: JSONValue], known: [String], at parent: String) throws(PolicyProblem) {
        guard let unknown = members.keys.filter({ !known.contains($0) }).sorted().first else { return }
        let keyPath = parent.isEmpty ? unknown : "\(parent).\(unknown)"
        throw PolicyProblem(detail: "unknown key \(quoted(keyPath)); remove it or fix its spelling (this vaultctl knows: \(known.joined(separator: ", ")))")
    }

    private static func object(_ value: JSONValue, at keyPath: String) throws(PolicyProblem) -> [String: JSONValue] {
        guard case .object(let members) = value else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) must be an object, not \(value.kind)")
        }
        return members
    }

    private static func wholeNumber(_ value: JSONValue, in range: ClosedRange<Int>, at keyPath: String,
                                    unit: String) throws(PolicyProblem) -> Int {
        guard case .integer(let v) = value, range.contains(v) else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) must be a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    private static func rangeList(_ value: JSONValue, at keyPath: String, mayBeEmpty: Bool) throws(PolicyProblem) -> [IPRange] {
        guard case .array(let items) = value else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) must be an array of CIDR ranges such as \"100.64.0.0/10\", not \(value.kind)")
        }
        guard mayBeEmpty || !items.isEmpty else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) must list at least one range; leave it out to use the built-in ones")
        }
        guard items.count <= Policy.maximumRangeCount else {
            throw PolicyProblem(detail: "\(quoted(keyPath)) lists \(items.count) ranges; at most \(Policy.maximumRangeCount) are allowed")
        }
        var ranges: [IPRange] = []
        for (i, item) in items.enumerated() {
            let itemPath = "\(keyPath)[\(i)]"
            guard case .string(let text) = item else {
                throw PolicyProblem(detail: "\(quoted(itemPath)) must be a CIDR range such as \"100.64.0.0/10\" written as a string, not \(item.kind)")
            }
            guard text.utf8.count <= 64, let range = IPRange(text) else {
                throw PolicyProblem(detail: "\(quoted(itemPath)) is \(quoted(text)), not a CIDR range such as \"100.64.0.0/10\" or \"fd7a:115c:a1e0::/48\"")
            }
            ranges.append(range)
        }
        return ranges
    }

    // MARK: Words

    /// `"text"` on one line: quotes, backslashes and control characters escaped as in JSON, long text cut.
    package static func quoted(_ text: String) -> String {
        var out = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 80 {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) || scalar.properties.generalCategory == .lineSeparator
                    || scalar.properties.generalCategory == .paragraphSeparator || scalar.properties.generalCategory == .format {
                    out += "\\u" + hex4(scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09
    }
}
