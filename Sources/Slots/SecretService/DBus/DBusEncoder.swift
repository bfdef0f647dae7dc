/// Writes D-Bus values in the wire format (little-endian), with the alignment the specification requires.
///
/// Alignment is relative to the start of the message; a body starts on an 8-byte boundary, so a body
/// encoded on its own lines up the same way.
struct DBusEncoder {
    private(set) var bytes: [UInt8] = []

    init() {}

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private mutating func put<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func putString(_ s: String) {
        let utf8 = Array(s.utf8)
        put(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    mutating func write(_ value: DBusValue) {
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): put(UInt32(v ? 1 : 0))
        case .int16(let v): put(v)
        case .uint16(let v): put(v)
        case .int32(let v): put(v)
        case .uint32(let v): put(v)
        case .int64(let v): put(v)
        case .uint64(let v): put(v)
        case .double(let v): put(v.bitPattern)
        case .string(let s), .objectPath(let s): putString(s)
        case .signature(let s):
            let utf8 = Array(s.utf8)
            bytes.append(UInt8(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        case .bytes(let b):
            put(UInt32(b.count))
            bytes.append(contentsOf: b)
        case .array(let element, let items):
            put(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(to: DBusSignature.alignment(of: element))
            let start = bytes.count
            for item in items { write(item) }
            let length = UInt32(bytes.count - start).littleEndian
            withUnsafeBytes(of: length) { raw in
                for i in 0..<4 { bytes[lengthAt + i] = raw[i] }
            }
        case .structure(let fields):
            pad(to: 8)
            for f in fields { write(f) }
        case .dictEntry(let k, let v):
            pad(to: 8)
            write(k)
            write(v)
        case .variant(let inner):
            write(.signature(inner.signature))
            write(inner)
        }
    }
}
