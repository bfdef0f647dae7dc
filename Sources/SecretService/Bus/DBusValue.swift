/// One D-Bus value, typed as on the wire (the D-Bus specification's "type system").
///
/// Only what the Secret Service needs is here: no file descriptors, no 16-bit integers. `ay` has its own
/// case (`bytes`), so keys and ciphertexts are not arrays of boxed bytes. Never holds plaintext: secrets
/// cross the bus encrypted (see `SessionKeyExchange`).
indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `ay`.
    case bytes([UInt8])
    /// An array of anything but bytes; `element` is the signature of one element (e.g. `o`, `{sv}`).
    case array(element: String, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    /// The value's signature (one complete type).
    var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let k, let v): return "{" + k.signature + v.signature + "}"
        case .variant: return "v"
        }
    }

    /// `a{ss}` from pairs, sorted by key so messages are deterministic.
    static func stringDictionary(_ pairs: [(String, String)]) -> DBusValue {
        .array(element: "{ss}", pairs.sorted { $0.0 < $1.0 }.map { .dictEntry(.string($0.0), .string($0.1)) })
    }

    // Reading replies: nil when the value is not of the expected type.

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var objectPath: String? { if case .objectPath(let s) = self { return s }; return nil }
    var bool: Bool? { if case .boolean(let b) = self { return b }; return nil }
    var uint64: UInt64? { if case .uint64(let v) = self { return v }; return nil }
    var bytes: [UInt8]? { if case .bytes(let b) = self { return b }; return nil }
    var fields: [DBusValue]? { if case .structure(let f) = self { return f }; return nil }
    var elements: [DBusValue]? {
        switch self {
        case .array(_, let e): return e
        case .bytes(let b): return b.map(DBusValue.byte)
        default: return nil
        }
    }
    /// The value inside a variant (a value that is not a variant is returned as it is).
    var unwrapped: DBusValue { if case .variant(let v) = self { return v.unwrapped }; return self }
    /// The object paths of an `ao`.
    var objectPaths: [String]? { elements?.compactMap(\.objectPath) }
    /// The pairs of an `a{ss}` (other entries are skipped).
    var stringPairs: [String: String]? {
        guard let entries = elements else { return nil }
        var out: [String: String] = [:]
        for case .dictEntry(let k, let v) in entries {
            if let k = k.string, let v = v.unwrapped.string { out[k] = v }
        }
        return out
    }
}
