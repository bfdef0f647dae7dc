import CJSONC

/// json-c (a strict tokener that checks UTF-8), each document converted into vaultctl's `JSONValue`
/// (JSONValue.swift, compiled in). json-c keeps the last of two equal keys without saying so, so it could
/// not keep the duplicate-key refusal; it is measured for the figures. The mode record is parsed whole and
/// only the one entry converted.
enum Probe {
    static let name = "json-c"

    static func mode(policy: [UInt8], modes: [UInt8], rateLimit: [UInt8], slot: String, expected: String) -> String? {
        guard let p = load(policy).flatMap(value), p["version"]?.intValue == 1,
              let r = load(rateLimit).flatMap(value), r["version"]?.intValue == 1,
              let m = load(modes) else { return nil }
        defer { json_object_put(m) }
        var version: OpaquePointer?, slots: OpaquePointer?, entry: OpaquePointer?
        guard json_object_object_get_ex(m, "version", &version) != 0, json_object_get_int64(version) == 1,
              json_object_object_get_ex(m, "slots", &slots) != 0,
              json_object_object_get_ex(slots, slot, &entry) != 0, let entry else { return nil }
        return convert(entry)?.stringValue
    }

    static func load(_ bytes: [UInt8]) -> OpaquePointer? {
        guard let tok = json_tokener_new() else { return nil }
        defer { json_tokener_free(tok) }
        json_tokener_set_flags(tok, Int32(JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8))
        let object = bytes.withUnsafeBytes {
            json_tokener_parse_ex(tok, $0.baseAddress!.assumingMemoryBound(to: CChar.self), Int32($0.count))
        }
        guard json_tokener_get_error(tok) == json_tokener_success, json_tokener_get_parse_end(tok) == bytes.count else {
            if let object { json_object_put(object) }
            return nil
        }
        return object
    }

    static func value(_ root: OpaquePointer) -> JSONValue? {
        defer { json_object_put(root) }
        return convert(root)
    }

    static func convert(_ j: OpaquePointer?) -> JSONValue? {
        switch json_object_get_type(j) {
        case json_type_null: return .null
        case json_type_boolean: return .bool(json_object_get_boolean(j) != 0)
        case json_type_int: return .integer(Int(json_object_get_int64(j)))
        case json_type_double: return JSONValue(json_object_get_double(j))
        case json_type_string:
            let bytes = UnsafeRawBufferPointer(start: json_object_get_string(j), count: Int(json_object_get_string_len(j)))
            return .string(String(decoding: bytes, as: UTF8.self))
        case json_type_array:
            let n = json_object_array_length(j)
            var items: [JSONValue] = []
            items.reserveCapacity(n)
            for i in 0..<n {
                guard let item = convert(json_object_array_get_idx(j, i)) else { return nil }
                items.append(item)
            }
            return .array(items)
        case json_type_object:
            var members: [String: JSONValue] = [:]
            var it = json_object_iter_begin(j)
            var end = json_object_iter_end(j)
            while json_object_iter_equal(&it, &end) == 0 {
                guard let key = json_object_iter_peek_name(&it), let v = convert(json_object_iter_peek_value(&it)) else { return nil }
                members[String(cString: key)] = v
                json_object_iter_next(&it)
            }
            return .object(members)
        default: return nil
        }
    }
}
