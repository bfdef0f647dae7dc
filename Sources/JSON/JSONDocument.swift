/// A file vaultctl keeps as JSON, converted by hand to and from a `JSONValue` (no `Codable`, so no
/// Foundation in the binary, and every field's rule is written where it can be read).
///
/// `init(json:)` is as tolerant as the old `Codable` reading was, so files written by earlier versions
/// still load: members it does not know are ignored, and an optional field may be absent or `null`. `json`
/// leaves out the optional fields that are nil, as `JSONEncoder` did.
package protocol JSONDocument: Sendable {
    /// Reads the document; throws `.mismatch` naming the first field that is missing or of the wrong type.
    init(json: JSONValue) throws(JSONError)
    /// The document as a value.
    var json: JSONValue { get }
}

extension JSONDocument {
    /// Parses `bytes` and reads the document from them.
    package init(jsonBytes bytes: UnsafeRawBufferPointer) throws(JSONError) {
        try self.init(json: JSONParser.parse(bytes))
    }

    /// Parses `bytes` and reads the document from them.
    package init(jsonBytes bytes: [UInt8]) throws(JSONError) {
        try self.init(json: JSONParser.parse(bytes))
    }
}

/// The members of an object being read into a `JSONDocument`, with the reason to throw when one is not as
/// it must be.
///
/// `read` closures return nil for a value of the wrong type; `\.intValue`, `\.stringValue` and the other
/// accessors of `JSONValue` fit.
package struct JSONFields {
    package let members: [String: JSONValue]
    /// What the object is, for messages (`"the rate limit"`).
    package let what: String

    /// The members of `value`; throws when it is not an object.
    package init(_ value: JSONValue, _ what: String) throws(JSONError) {
        guard let members = value.objectValue else { throw .mismatch("\(what) must be an object, not \(value.kind)") }
        self.members = members
        self.what = what
    }

    /// The member `key`, which must be there, not null, and readable by `read`.
    package func required<T>(_ key: String, _ read: (JSONValue) throws(JSONError) -> T?) throws(JSONError) -> T {
        guard let value = members[key], value != .null else { throw .mismatch("\(what) has no \"\(key)\"") }
        return try readable(key, value, read)
    }

    /// The member `key`: nil when it is absent or null, else it must be readable by `read`.
    package func optional<T>(_ key: String, _ read: (JSONValue) throws(JSONError) -> T?) throws(JSONError) -> T? {
        guard let value = members[key], value != .null else { return nil }
        return try readable(key, value, read)
    }

    private func readable<T>(_ key: String, _ value: JSONValue,
                             _ read: (JSONValue) throws(JSONError) -> T?) throws(JSONError) -> T {
        guard let result = try read(value) else {
            throw .mismatch("\"\(key)\" of \(what) cannot be \(value.kind)")
        }
        return result
    }
}

extension JSONValue {
    /// An object of the members that are not nil (how a document leaves an optional field out).
    package static func object(dropping members: [String: JSONValue?]) -> JSONValue {
        .object(members.compactMapValues { $0 })
    }

    /// The elements of an array, each read by `read`; nil when this is not an array or one element is not
    /// readable.
    package func array<T, E: Error>(of read: (JSONValue) throws(E) -> T?) throws(E) -> [T]? {
        guard let items = arrayValue else { return nil }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let value = try read(item) else { return nil }
            out.append(value)
        }
        return out
    }

    /// The members of an object, each value read by `read`; nil when this is not an object or one value is
    /// not readable.
    package func dictionary<T, E: Error>(of read: (JSONValue) throws(E) -> T?) throws(E) -> [String: T]? {
        guard let members = objectValue else { return nil }
        var out: [String: T] = [:]
        for (key, member) in members {
            guard let value = try read(member) else { return nil }
            out[key] = value
        }
        return out
    }
}
