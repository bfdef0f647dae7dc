/// Reading a few members of a large document without building the rest of it.
///
/// `modes.json` names every slot; a read or a status needs one entry. Building the whole document for that
/// (a `JSONValue` tree, then dictionaries) was most of a status at 1000 slots. `values(at:in:)` walks the
/// text once: it checks all of it exactly as `parse` does (syntax, UTF-8, escapes, numbers, nesting,
/// trailing text) but builds only the values it was asked for. One check is narrower: duplicate keys are
/// looked for only among the keys on the requested paths, where they would make the answer ambiguous.
extension JSONParser {
    /// The value at each path (object keys from the top); nil where a key is not there or a value on the way
    /// is not an object. Throws what `parse` would throw for the text (but see above for duplicates).
    package static func values(at paths: [[String]], in bytes: UnsafeRawBufferPointer,
                       maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> [JSONValue?] {
        var parser = JSONParser(lookingIn: bytes, maximumDepth: maximumDepth)
        return try parser.lookupDocument(paths.map { $0.map { Array($0.utf8) } })
    }

    /// `values(at:in:)` of an array.
    package static func values(at paths: [[String]], in bytes: [UInt8],
                       maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> [JSONValue?] {
        try bytes.withTypedUnsafeBytes { (raw) throws(JSONError) -> [JSONValue?] in
            try values(at: paths, in: raw, maximumDepth: maximumDepth)
        }
    }
}

extension JSONValue {
    /// The value under `keys` (object members, outermost first); nil where one is missing or a value on the
    /// way is not an object.
    package func member(at keys: ArraySlice<[UInt8]>) -> JSONValue? {
        var value = self
        for key in keys {
            guard case .object(let members) = value, let next = members[String(decoding: key, as: UTF8.self)] else { return nil }
            value = next
        }
        return value
    }
}
