/// One D-Bus message: a method call we send, or a reply, error or signal we receive.
struct DBusMessage: Sendable {
    enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    var kind: Kind
    var serial: UInt32 = 0
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var signature: String = ""
    /// The body as received (little- or big-endian, as `littleEndian` says), or as we encoded it.
    var body: [UInt8] = []
    var littleEndian = true
    /// Where the body starts in the received message (alignment is counted from the message start).
    var bodyOffset = 0
    var raw: [UInt8] = []

    /// A method call to `destination`.
    static func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                     _ arguments: [DBusValue] = []) -> DBusMessage {
        var m = DBusMessage(kind: .methodCall)
        m.destination = destination
        m.path = path
        m.interface = interface
        m.member = member
        m.signature = arguments.map(\.signature).joined()
        var body = DBusEncoder()
        for a in arguments { body.write(a) }
        m.body = body.bytes
        return m
    }

    /// The message on the wire, with `serial`.
    func encoded(serial: UInt32) -> [UInt8] {
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ v: DBusValue) { fields.append(.structure([.byte(code), .variant(v)])) }
        if let path { field(1, .objectPath(path)) }
        if let interface { field(2, .string(interface)) }
        if let member { field(3, .string(member)) }
        if let errorName { field(4, .string(errorName)) }
        if let replySerial { field(5, .uint32(replySerial)) }
        if let destination { field(6, .string(destination)) }
        if !signature.isEmpty { field(8, .signature(signature)) }
        var e = DBusEncoder()
        for b in [UInt8(ascii: "l"), kind.rawValue, 0, 1] { e.write(.byte(b)) }
        e.write(.uint32(UInt32(body.count)))
        e.write(.uint32(serial))
        e.write(.array(element: "(yv)", fields))
        e.pad(to: 8)
        return e.bytes + body
    }

    /// Largest message accepted from a peer (the specification allows 128 MiB; nothing we ask for comes close).
    static let maximumCount = 64 * 1024 * 1024

    /// How many bytes the message at the start of `buffer` takes, once its first 16 bytes are there;
    /// nil when there are fewer; throws on a header no peer may send.
    static func length(ofMessageIn buffer: ArraySlice<UInt8>) throws(DBusError) -> Int? {
        guard buffer.count >= 16 else { return nil }
        let b = Array(buffer.prefix(16))
        guard b[0] == UInt8(ascii: "l") || b[0] == UInt8(ascii: "B"), b[3] == 1 else {
            throw .protocolError("the bus sent a message this client cannot read")
        }
        var d = DBusDecoder(b, from: 4, to: 16, littleEndian: b[0] == UInt8(ascii: "l"))
        guard case .uint32(let bodyLength)? = d.read(signature: "u")?.first,
              d.align(4), case .uint32(_)? = d.read(signature: "u")?.first,
              case .uint32(let fieldsLength)? = d.read(signature: "u")?.first else {
            throw .protocolError("the bus sent a damaged message header")
        }
        let header = (16 + Int(fieldsLength) + 7) / 8 * 8
        let total = header + Int(bodyLength)
        guard total <= maximumCount else { throw .protocolError("the bus sent a message of \(total) bytes") }
        return total
    }

    /// Parses one whole received message.
    static func parse(_ raw: [UInt8]) throws(DBusError) -> DBusMessage {
        guard raw.count >= 16, let kind = Kind(rawValue: raw[1]) else {
            throw .protocolError("the bus sent a message of an unknown type")
        }
        let little = raw[0] == UInt8(ascii: "l")
        var d = DBusDecoder(raw, from: 4, to: raw.count, littleEndian: little)
        guard let head = d.read(signature: "uua(yv)"), head.count == 3,
              case .uint32(let bodyLength) = head[0], case .uint32(let serial) = head[1],
              let fields = head[2].elements, d.align(8) else {
            throw .protocolError("the bus sent a damaged message header")
        }
        var m = DBusMessage(kind: kind)
        m.serial = serial
        m.littleEndian = little
        for f in fields {
            guard let parts = f.fields, parts.count == 2, case .byte(let code) = parts[0] else { continue }
            let v = parts[1].unwrapped
            switch code {
            case 1: m.path = v.objectPath
            case 2: m.interface = v.string
            case 3: m.member = v.string
            case 4: m.errorName = v.string
            case 5: if case .uint32(let s) = v { m.replySerial = s }
            case 6: m.destination = v.string
            case 7: m.sender = v.string
            case 8: if case .signature(let s) = v { m.signature = s }
            default: break
            }
        }
        m.bodyOffset = d.offset
        guard m.bodyOffset + Int(bodyLength) == raw.count else {
            throw .protocolError("the bus sent a message whose length does not add up")
        }
        m.raw = raw
        return m
    }

    /// The body's values, read by the message's signature; nil when they do not parse.
    func arguments() -> [DBusValue]? {
        if signature.isEmpty { return [] }
        var d = DBusDecoder(raw, from: bodyOffset, to: raw.count, littleEndian: littleEndian)
        guard let values = d.read(signature: signature), d.isAtEnd else { return nil }
        return values
    }

    /// An error reply's text: its first argument when that is a string.
    var errorMessage: String {
        if case .string(let s)? = arguments()?.first { return s }
        return errorName ?? "unknown error"
    }
}
