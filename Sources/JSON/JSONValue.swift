/// One JSON value: what `JSONParser` reads and `JSONWriter` writes.
///
/// Numbers come in two cases, so that whole numbers stay exact and other numbers round-trip exactly:
/// - `.integer`: a number that is whole and fits `Int`, however it is written (`3`, `3.0`, `1E2`);
/// - `.number`: any other finite number (`1764412345.123456`, `1.5`, `1e20`). JSON has no infinity or NaN,
///   and a number beyond `Double` (`1e400`) is not read at all.
///
/// An object holds one value per key (the parser refuses a key that appears twice) and no order (the
/// writer sorts the keys).
///
/// `Sendable`: values only.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number that is whole and fits `Int`.
    case integer(Int)
    /// Any other finite number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A `Double` as the value the parser would read back from its text: `.integer` when it is whole and
    /// fits `Int` (so `1800000123.0` compares equal to what a file holding `1800000123` reads as), else
    /// `.number`; `.null` for infinity and NaN, which JSON cannot hold.
    package init(_ value: Double) {
        if let integer = Int(exactly: value) {
            self = .integer(integer)
        } else if value.isFinite {
            self = .number(value)
        } else {
            self = .null
        }
    }

    /// What kind of value this is, in words for an error message ("a string", "an object", …).
    package var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "true/false"
        case .integer, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The member `key` of an object; nil when this is not an object or has no such member.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The value of `.bool`, else nil.
    package var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The value of `.integer`, else nil (a fraction is never rounded to fit).
    package var intValue: Int? {
        guard case .integer(let value) = self else { return nil }
        return value
    }

    /// The value of `.integer` as a `Int32` when it fits, else nil.
    package var int32Value: Int32? {
        intValue.flatMap { Int32(exactly: $0) }
    }

    /// Any number as a `Double` (`.integer` converted, which is exact up to 2^53), else nil.
    package var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The value of `.string`, else nil.
    package var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The elements of `.array`, else nil.
    package var arrayValue: [JSONValue]? {
        guard case .array(let items) = self else { return nil }
        return items
    }

    /// The members of `.object`, else nil.
    package var objectValue: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return members
    }
}
