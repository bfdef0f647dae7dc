/// Reads D-Bus values from a received message, guided by their signature.
///
/// Everything a peer sends is checked: lengths against the buffer, alignment padding, UTF-8 and NUL in
/// strings, nesting depth. Malformed input is `nil` from `read`, never a trap. Offsets are relative to the
/// start of the message, which is what alignment is measured from.
struct DBusDecoder {
    private let bytes: [UInt8]
    private(set) var offset: Int
    private let end: Int
    private let littleEndian: Bool
    /// Arrays and structures may nest 32 deep each (the specification's limit); 64 in all.
    private static let maximumDepth = 64

    init(_ bytes: [UInt8], from offset: Int, to end: Int, littleEndian: Bool) {
        self.bytes = bytes
        self.offset = offset
        self.end = min(end, bytes.count)
        self.littleEndian = littleEndian
    }

    var isAtEnd: Bool { offset >= end }

    /// Reads every complete type of `signature` in turn.
    mutating func read(signature: String) -> [DBusValue]? {
        guard let types = DBusSignature.split(signature) else { return nil }
        var out: [DBusValue] = []
        for t in types {
            guard let v = read(type: Array(t.utf8), depth: 0) else { return nil }
            out.append(v)
        }
        return out
    }

    mutating func align(_ n: Int) -> Bool {
        let target = (offset + n - 1) / n * n
        guard target <= end else { return false }
        while offset < target {
            guard bytes[offset] == 0 else { return false }  // padding must be zero
            offset += 1
        }
        return true
    }

    private mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard align(size), offset + size <= end else { return nil }
        var v: T = 0
        for i in 0..<size {
            let b = T(truncatingIfNeeded: bytes[offset + i])
            v |= littleEndian ? b << (8 * i) : b << (8 * (size - 1 - i))
        }
        offset += size
        return v
    }

    private mutating func text(count: Int) -> String? {
        guard count >= 0, offset + count + 1 <= end, bytes[offset + count] == 0 else { return nil }
        let slice = bytes[offset..<(offset + count)]
        guard UTF8Validation.isValid(slice, allowingNUL: false) else { return nil }
        offset += count + 1
        return String(decoding: slice, as: UTF8.self)
    }

    /// One value of the complete type `type` (a signature's bytes).
    private mutating func read(type: [UInt8], depth: Int) -> DBusValue? {
        guard let first = type.first, depth < Self.maximumDepth else { return nil }
        switch first {
        case UInt8(ascii: "y"):
            guard offset < end else { return nil }
            defer { offset += 1 }
            return .byte(bytes[offset])
        case UInt8(ascii: "b"):
            guard let v = fixed(UInt32.self), v <= 1 else { return nil }
            return .boolean(v == 1)
        case UInt8(ascii: "i"): return fixed(Int32.self).map(DBusValue.int32)
        case UInt8(ascii: "u"), UInt8(ascii: "h"): return fixed(UInt32.self).map(DBusValue.uint32)
        case UInt8(ascii: "n"): return fixed(Int16.self).map(DBusValue.int16)
        case UInt8(ascii: "q"): return fixed(UInt16.self).map(DBusValue.uint16)
        case UInt8(ascii: "x"): return fixed(Int64.self).map(DBusValue.int64)
        case UInt8(ascii: "t"): return fixed(UInt64.self).map(DBusValue.uint64)
        case UInt8(ascii: "d"): return fixed(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case UInt8(ascii: "s"), UInt8(ascii: "o"):
            guard let n = fixed(UInt32.self), let s = text(count: Int(n)) else { return nil }
            return first == UInt8(ascii: "s") ? .string(s) : .objectPath(s)
        case UInt8(ascii: "g"):
            guard offset < end else { return nil }
            let n = Int(bytes[offset])
            offset += 1
            return text(count: n).map(DBusValue.signature)
        case UInt8(ascii: "v"):
            guard offset < end else { return nil }
            let n = Int(bytes[offset])
            offset += 1
            guard let sig = text(count: n), let types = DBusSignature.split(sig), types.count == 1,
                  let inner = read(type: Array(sig.utf8), depth: depth + 1) else { return nil }
            return .variant(inner)
        case UInt8(ascii: "a"):
            let element = Array(type.dropFirst())
            guard let n = fixed(UInt32.self), n <= 64 * 1024 * 1024,
                  align(DBusSignature.alignment(of: String(decoding: element, as: UTF8.self))) else { return nil }
            let stop = offset + Int(n)
            guard stop <= end else { return nil }
            if element == [UInt8(ascii: "y")] {
                defer { offset = stop }
                return .bytes(Array(bytes[offset..<stop]))
            }
            var items: [DBusValue] = []
            while offset < stop {
                guard let item = read(type: element, depth: depth + 1) else { return nil }
                items.append(item)
            }
            guard offset == stop else { return nil }
            return .array(element: String(decoding: element, as: UTF8.self), items)
        case UInt8(ascii: "("):
            guard align(8), let types = DBusSignature.split(String(decoding: type.dropFirst().dropLast(), as: UTF8.self))
            else { return nil }
            var fields: [DBusValue] = []
            for t in types {
                guard let f = read(type: Array(t.utf8), depth: depth + 1) else { return nil }
                fields.append(f)
            }
            return .structure(fields)
        case UInt8(ascii: "{"):
            guard align(8), let types = DBusSignature.split(String(decoding: type.dropFirst().dropLast(), as: UTF8.self)),
                  types.count == 2,
                  let k = read(type: Array(types[0].utf8), depth: depth + 1),
                  let v = read(type: Array(types[1].utf8), depth: depth + 1) else { return nil }
            return .dictEntry(k, v)
        default:
            return nil
        }
    }
}
