#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One JSON value as `JSONDecoder` reads it, for documents whose shape is checked by hand.
///
/// `JSONSerialization` is not in FoundationEssentials, so this is decoded through the `Decoder` containers:
/// scalars through `singleValueContainer`, objects through a keyed container (every key, via `allKeys`),
/// arrays through an unkeyed one. A child that cannot be read throws with its coding path, so the caller can
/// say where. What `JSONDecoder` does that matters here (swift-foundation, Swift 6):
/// - a number with no fraction that fits `Int` (also `3.0`, `1E2`) is `.integer`; any other finite number is
///   `.number`; a number beyond `Double` (`1e400`) cannot be read at all;
/// - of duplicate keys in one object the FIRST wins silently, and `allKeys` lists each key once, so
///   duplicates are invisible here; `JSONShape` finds them in the raw bytes;
/// - nesting deeper than 512 is refused as invalid JSON (`JSONShape` refuses far less first).
///
/// `Sendable`: values only.
enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    /// A number that is whole and fits `Int`.
    case integer(Int)
    /// Any other finite number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Any string as a coding key, for reading every key of an object.
    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() { self = .null; return }
            if let value = try? single.decode(Bool.self) { self = .bool(value); return }
            if let value = try? single.decode(Int.self) { self = .integer(value); return }
            if let value = try? single.decode(Double.self), value.isFinite { self = .number(value); return }
            if let value = try? single.decode(String.self) { self = .string(value); return }
        }
        // The container calls fail on a type mismatch without reading children; children then throw for real.
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var members: [String: JSONValue] = [:]
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {  // a stable order: the same file gives the same message
                members[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key)
            }
            self = .object(members)
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !list.isAtEnd {
                items.append(try list.decode(JSONValue.self))
            }
            self = .array(items)
            return
        }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                debugDescription: "a value that cannot be read"))
    }

    /// What kind of value this is, in words for an error message ("a string", "an object", …).
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "true/false"
        case .integer, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
