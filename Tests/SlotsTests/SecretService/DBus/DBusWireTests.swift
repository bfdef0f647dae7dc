import Testing
@testable import Slots

/// The D-Bus wire format, against byte layouts worked out by hand from the specification's marshalling
/// rules (little-endian, alignment from the message start), and the decoder's refusals of what no peer
/// may send.
@Suite("D-Bus wire format")
struct DBusWireTests {
    static func encode(_ values: DBusValue...) -> [UInt8] {
        var e = DBusEncoder()
        for v in values { e.write(v) }
        return e.bytes
    }

    static func decode(_ bytes: [UInt8], _ signature: String) -> [DBusValue]? {
        var d = DBusDecoder(bytes, from: 0, to: bytes.count, littleEndian: true)
        guard let v = d.read(signature: signature), d.isAtEnd else { return nil }
        return v
    }

    @Test func stringIsLengthBytesAndNul() {
        #expect(Self.encode(.string("ab")) == [2, 0, 0, 0, 0x61, 0x62, 0])
    }

    @Test func structureAlignsItsFields() {
        #expect(Self.encode(.byte(1), .structure([.byte(1), .uint32(2)])) == [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])
    }

    @Test func dictionaryOfStringsMatchesTheSpecificationLayout() {
        // length 14 | pad to 8 | "k" | pad to 4 | "v"
        let expected: [UInt8] = [14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x6B, 0, 0, 0, 1, 0, 0, 0, 0x76, 0]
        #expect(Self.encode(.stringDictionary([("k", "v")])) == expected)
        #expect(Self.decode(expected, "a{ss}")?.first?.stringPairs == ["k": "v"])
    }

    @Test func emptyArrayStillPadsToItsElementAlignment() {
        #expect(Self.encode(.array(element: "(oayays)", [])) == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(Self.decode([0, 0, 0, 0, 0, 0, 0, 0], "a(oayays)") == [.array(element: "(oayays)", [])])
    }

    @Test func variantCarriesItsSignature() {
        #expect(Self.encode(.variant(.uint32(5))) == [1, 0x75, 0, 0, 5, 0, 0, 0])
        #expect(Self.decode([1, 0x75, 0, 0, 5, 0, 0, 0], "v") == [.variant(.uint32(5))])
    }

    @Test func byteArrayIsKeptAsBytes() {
        let bytes = Self.encode(.bytes([9, 8, 7]))
        #expect(bytes == [3, 0, 0, 0, 9, 8, 7])
        #expect(Self.decode(bytes, "ay") == [.bytes([9, 8, 7])])
    }

    @Test func secretStructRoundTrips() {
        let secret = DBusValue.structure([.objectPath("/org/freedesktop/secrets/session/s1"), .bytes(Array(0..<16)),
                                          .bytes(Array(repeating: 0xAB, count: 32)), .string("text/plain")])
        let items = DBusValue.array(element: "{o(oayays)}", [.dictEntry(.objectPath("/a/b"), secret)])
        let bytes = Self.encode(.int32(-1), items, .boolean(true), .uint64(1 << 40), .int64(-5), .double(0.5))
        #expect(Self.decode(bytes, "ia{o(oayays)}btxd") == [.int32(-1), items, .boolean(true), .uint64(1 << 40), .int64(-5), .double(0.5)])
    }

    @Test func methodCallParsesBackWithItsHeader() throws {
        let call = DBusMessage.call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
                                    "SearchItems", [.stringDictionary([("slot", "x"), ("xdg:schema", "org.vaultctl.Slot")])])
        let wire = call.encoded(serial: 7)
        #expect(try DBusMessage.length(ofMessageIn: wire[...]) == wire.count)
        #expect(try DBusMessage.length(ofMessageIn: wire[..<15]) == nil, "fewer than 16 bytes: not yet known")
        let m = try DBusMessage.parse(wire)
        #expect(m.kind == .methodCall && m.serial == 7)
        #expect(m.destination == "org.freedesktop.secrets" && m.path == "/org/freedesktop/secrets")
        #expect(m.interface == "org.freedesktop.Secret.Service" && m.member == "SearchItems")
        #expect(m.signature == "a{ss}")
        #expect(m.arguments()?.first?.stringPairs == ["slot": "x", "xdg:schema": "org.vaultctl.Slot"])
    }

    /// A reply in big-endian byte order (a peer on another architecture may send one): REPLY_SERIAL 3,
    /// SIGNATURE "u", body 42.
    @Test func bigEndianReplyParses() throws {
        let wire: [UInt8] = [0x42, 2, 0, 1, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 15,
                             5, 1, 0x75, 0, 0, 0, 0, 3,
                             8, 1, 0x67, 0, 1, 0x75, 0, 0,
                             0, 0, 0, 42]
        #expect(try DBusMessage.length(ofMessageIn: wire[...]) == wire.count)
        let m = try DBusMessage.parse(wire)
        #expect(m.kind == .methodReturn && m.serial == 7 && m.replySerial == 3)
        #expect(m.arguments() == [.uint32(42)])
    }

    @Test(arguments: [
        ([1, 0, 0, 0, 0x61, 0x62, 0] as [UInt8], "s"),          // length says 1, two bytes follow
        ([2, 0, 0, 0, 0x61, 0, 0], "s"),                         // NUL inside a string
        ([2, 0, 0, 0, 0x61, 0x62, 1], "s"),                      // not NUL-terminated
        ([2, 0, 0, 0, 0xC3, 0x28, 0], "s"),                      // invalid UTF-8
        ([2, 0, 0, 0], "b"),                                     // a boolean is 0 or 1
        ([9, 0, 0, 0, 1, 2], "ay"),                              // array longer than the message
        ([1, 0, 0, 0, 1, 0, 0, 0, 0x61], "(ys)"),                // padding that is not zero
        ([1, 0x7A, 0, 0], "v"),                                  // a variant of an unknown type
        ([2, 0x75, 0x75, 0, 0, 0, 0, 0, 0, 0, 0, 0], "v"),       // a variant of two types
        ([0, 0, 0], "u"),                                        // cut short
    ])
    func malformedValuesAreRefused(_ bytes: [UInt8], _ signature: String) {
        #expect(Self.decode(bytes, signature) == nil)
    }

    @Test func signaturesNestNoDeeperThanTheLimit() {
        #expect(DBusSignature.split(String(repeating: "a", count: 80) + "y") == nil)
        #expect(DBusSignature.split("a{sv}(oayays)") == ["a{sv}", "(oayays)"])
        for bad in ["(", "()", "a", "{ss}", "({ss})", "a{vs}", "a{sss}", "z"] {
            #expect(DBusSignature.split(bad) == nil, "\(bad)")
        }
    }

    @Test func headerWithWrongLengthsIsRefused() throws {
        var wire = DBusMessage.call("d", "/p", "i.f", "M", [.string("x")]).encoded(serial: 1)
        wire[4] &+= 1  // body one byte longer than what follows
        #expect(throws: DBusError.self) { try DBusMessage.parse(wire) }
        var notDBus = wire
        notDBus[0] = UInt8(ascii: "X")
        #expect(throws: DBusError.self) { try DBusMessage.length(ofMessageIn: notDBus[...]) }
        var huge = wire
        huge[4] = 0xFF; huge[5] = 0xFF; huge[6] = 0xFF; huge[7] = 0x7F
        #expect(throws: DBusError.self) { try DBusMessage.length(ofMessageIn: huge[...]) }
    }
}

@Suite("D-Bus addresses")
struct BusAddressTests {
    @Test func unixPathsAndAbstractNamesAreParsedInOrder() {
        #expect(BusAddress.parse("unix:path=/run/user/1000/bus") == [.path("/run/user/1000/bus")])
        #expect(BusAddress.parse("unix:abstract=/tmp/dbus-x,guid=0123;unix:path=/x") == [.abstract("/tmp/dbus-x"), .path("/x")])
        #expect(BusAddress.parse("unix:path=/tmp/a%20b,guid=1") == [.path("/tmp/a b")])
    }

    @Test func otherTransportsAndBrokenEscapesAreSkipped() {
        #expect(BusAddress.parse("tcp:host=localhost,port=1;unix:path=/ok") == [.path("/ok")])
        #expect(BusAddress.parse("unix:path=/bad%zz") == [])
        #expect(BusAddress.parse("unix:tmpdir=/tmp") == [])
        #expect(BusAddress.parse("") == [])
    }

    @Test func withoutTheVariableTheRuntimeFolderSocketIsUsedOnlyWhenThere() {
        #expect(BusAddress.session(environment: { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/given" : nil }) == [.path("/given")])
        #expect(BusAddress.session(environment: { $0 == "XDG_RUNTIME_DIR" ? "/nonexistent-vaultctl" : nil }) == [])
        #expect(BusAddress.session(environment: { _ in nil }) == [])
    }
}

@Suite("D-Bus fuzz seeds")
struct DBusFuzzSeedTests {
    /// The seeds reach the body parser (a seed that fails at the header would fuzz nothing past it).
    @Test(arguments: ["search-items-reply", "error-service-unknown", "signal-name-acquired", "get-secret-reply",
                      "big-endian-reply", "attributes-reply"])
    func seedParsesWhole(_ name: String) throws {
        let bytes = try FuzzCorpus.read("dbus-message", name)
        #expect(try DBusMessage.length(ofMessageIn: bytes[...]) == bytes.count)
        let m = try DBusMessage.parse(bytes)
        #expect(m.arguments() != nil, "\(name): signature \(m.signature)")
    }
}
