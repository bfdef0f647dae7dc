import CJansson

/// jansson (json_loadb with JSON_REJECT_DUPLICATES), each document converted into vaultctl's `JSONValue`
/// (JSONValue.swift, compiled in), where the document rules would then run in Swift. The mode record is
/// parsed whole by jansson and only the one entry is converted, as the lookup does today.
enum Probe {
    static let name = "jansson"

    static func mode(policy: [UInt8], modes: [UInt8], rateLimit: [UInt8], slot: String, expected: String) -> String? {
        guard let p = load(policy).flatMap(value), p["version"]?.intValue == 1,
              let r = load(rateLimit).flatMap(value), r["version"]?.intValue == 1,
              let m = load(modes) else { return nil }
        defer { json_decref(m) }
        guard json_integer_value(json_object_get(m, "version")) == 1,
              let slots = json_object_get(m, "slots"), let entry = json_object_get(slots, slot) else { return nil }
        return value(entry)?.stringValue
    }

    static func load(_ bytes: [UInt8]) -> UnsafeMutablePointer<json_t>? {
        var error = json_error_t()
        return bytes.withUnsafeBytes { json_loadb($0.baseAddress, $0.count, Int(JSON_REJECT_DUPLICATES), &error) }
    }

    static func value(_ root: UnsafeMutablePointer<json_t>) -> JSONValue? {
        defer { json_decref(root) }
        return convert(root)
    }

    static func convert(_ j: UnsafeMutablePointer<json_t>) -> JSONValue? {
        switch j.pointee.type {
        case JSON_NULL: return .null
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        case JSON_INTEGER: return .integer(Int(json_integer_value(j)))
        case JSON_REAL: return JSONValue(json_real_value(j))
        case JSON_STRING:
            let bytes = UnsafeRawBufferPointer(start: json_string_value(j), count: json_string_length(j))
            return .string(String(decoding: bytes, as: UTF8.self))
        case JSON_ARRAY:
            var items: [JSONValue] = []
            items.reserveCapacity(json_array_size(j))
            for i in 0..<json_array_size(j) {
                guard let item = json_array_get(j, i).flatMap(convert) else { return nil }
                items.append(item)
            }
            return .array(items)
        case JSON_OBJECT:
            var members: [String: JSONValue] = [:]
            var iter = json_object_iter(j)
            while let it = iter {
                guard let key = json_object_iter_key(it), let v = json_object_iter_value(it).flatMap(convert) else { return nil }
                members[String(cString: key)] = v
                iter = json_object_iter_next(j, it)
            }
            return .object(members)
        default: return nil
        }
    }
}
