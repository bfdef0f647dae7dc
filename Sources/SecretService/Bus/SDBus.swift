import CSystemd
#if canImport(Glibc)
import Glibc
#endif
import Slots

/// A connection to the session bus through sd-bus (systemd's D-Bus library), the one place vaultctl calls
/// it: connecting, sending method calls and reading their replies as `DBusValue`s.
///
/// sd-bus does the protocol (authentication, `Hello`, marshalling, framing, validation of what peers send);
/// this file only moves values in and out of its messages. Nothing here waits without a deadline: calls are
/// sent with `sd_bus_call_async` (pipelined, so N independent calls cost one round trip) and their replies
/// gathered with `sd_bus_process` and `sd_bus_wait` for the time the caller has left, so a bus that accepts
/// and never answers is `timedOut`, not a hang. It never allows interactive authorization (sd-bus's default).
/// Not `Sendable`: one thread uses it at a time (the Secret Service slot holds it under a mutex).
final class BusConnection {
    private let bus: OpaquePointer
    /// Whether the bus has accepted us (authentication and `Hello` done) at some point.
    private var registered = false
    /// The connector that connected this socket, until the provider has had a call from it (`BusConnector`);
    /// then only its pid, to collect it when the connection closes.
    private var connector: BusConnector?
    private var connectorToReap: BusConnector?

    private init(bus: OpaquePointer) {
        self.bus = bus
    }

    deinit {
        releaseConnector()
        _ = sd.sd_bus_close_unref(bus)
        connectorToReap?.reap()
    }

    private func releaseConnector() {
        guard let connector else { return }
        connector.release()
        connectorToReap = connector
        self.connector = nil
    }

    /// Connects to the session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`
    /// (`SessionBusAddress`). Authentication and `Hello` go out at once and are answered while the first
    /// calls wait. The corresponding C functions are `sd_bus_new`, `sd_bus_set_address`,
    /// `sd_bus_set_bus_client` and `sd_bus_start`.
    static func open(deadline: Deadline) throws(DBusError) -> BusConnection {
        if case .failure(let error) = loadedSDBus { throw error }
        guard let address = SessionBusAddress.current() else { throw .noAddress }
        while true {
            var made: OpaquePointer?
            var rc = sd.sd_bus_new(&made)
            guard rc >= 0, let bus = made else { throw .cannotConnect(errorText(rc)) }
            rc = sd.sd_bus_set_address(bus, address.text)
            if rc >= 0 { rc = sd.sd_bus_set_bus_client(bus, 1) }
            if rc >= 0 { rc = sd.sd_bus_start(bus) }
            if rc >= 0 { return BusConnection(bus: bus) }
            _ = sd.sd_bus_close_unref(bus)
            // On a Unix socket, EAGAIN means the listener's backlog is full: try again until the deadline.
            if rc == -EAGAIN && deadline.remainingMilliseconds > 0 {
                usleep(1000)
                continue
            }
            if rc == -EINVAL { throw .badAddress(address.fromEnvironment) }
            throw .cannotConnect("could not connect to \(address.shown): \(errorText(rc))")
        }
    }

    /// The process name of the process that owns `org.freedesktop.secrets` (`keepassxc`, `gnome-keyring-d`),
    /// asked of the bus in the same trip as `calls` (to `destination`), whose replies come back too: one
    /// round trip for both. Whether that provider names its clients by the executable of their process
    /// (KeePassXC), which it cannot read for vaultctl (not dumpable), and how it must be searched, follow from
    /// it. nil when the name has no owner yet or the bus's answer cannot be used; a failure of the connection
    /// throws.
    func askProviderProcessName(alongside calls: [BusCall], destination: String,
                                deadline: Deadline) throws(DBusError) -> (String?, [Result<[DBusValue], DBusError>]) {
        let ask = BusCall("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                          [.string("org.freedesktop.secrets")], to: "org.freedesktop.DBus")
        let replies = try callAll([ask] + calls, destination: destination, deadline: deadline)
        let theirs = Array(replies.dropFirst())
        guard case .success(let values) = replies[0], case .uint32(let pid)? = values.first else { return (nil, theirs) }
        return (BusConnector.processName(of: pid), theirs)
    }

    /// A second connection to the same bus, on a socket that the connector connected (`BusConnector`), so
    /// that the provider sees a process it can name; nil when it could not be made (this one is then used).
    /// The corresponding C functions are `sd_bus_get_fd`, `sd_bus_new`, `sd_bus_set_fd`,
    /// `sd_bus_set_bus_client` and `sd_bus_start`.
    func reopenedThroughConnector(deadline: Deadline) -> BusConnection? {
        let fd = sd.sd_bus_get_fd(bus)
        guard fd >= 0, let connector = BusConnector.connect(like: fd, deadline: deadline) else { return nil }
        var made: OpaquePointer?
        let owned = sd.sd_bus_new(&made) >= 0 && made != nil && sd.sd_bus_set_fd(made, connector.socket, connector.socket) >= 0
        guard owned, let new = made, sd.sd_bus_set_bus_client(new, 1) >= 0, sd.sd_bus_start(new) >= 0 else {
            if !owned { close(connector.socket) }  // once given to the bus, closing the bus closes it
            if let made { _ = sd.sd_bus_close_unref(made) }
            connector.release()
            return nil
        }
        let connection = BusConnection(bus: new)
        connection.connector = connector
        return connection
    }

    /// Sends every call without waiting (at most `window` unanswered at once, below dbus-daemon's limit of
    /// pending replies per connection) and gathers the replies. A failure of the connection throws; an error
    /// reply is that call's `.failure(.remote)`.
    func callAll(_ calls: [BusCall], destination: String, window: Int = 64,
                 deadline: Deadline) throws(DBusError) -> [Result<[DBusValue], DBusError>] {
        guard !calls.isEmpty else { return [] }
        // The provider names the connection's process at its first call to it (KeePassXC: not at a `Ping`,
        // which its D-Bus library answers alone): once one is answered, the connector may end.
        defer {
            if connector != nil && calls.contains(where: { $0.member != "Ping" && ($0.destination ?? destination) != "org.freedesktop.DBus" }) {
                releaseConnector()
            }
        }
        let pending = PendingReplies(count: calls.count)
        var slots: [OpaquePointer?] = []
        slots.reserveCapacity(calls.count)
        defer {
            // A slot released before its reply came cancels the call: no callback writes into `pending` later.
            for slot in slots { _ = sd.sd_bus_slot_unref(slot) }
            withExtendedLifetime(pending) {}
        }
        var next = 0
        while pending.answered < calls.count {
            while next < calls.count && next - pending.answered < window {
                slots.append(try send(calls[next], destination: calls[next].destination ?? destination, reply: pending.entry(next), deadline: deadline))
                next += 1
            }
            let rc = sd.sd_bus_process(bus, nil)
            if !registered && sd.sd_bus_is_ready(bus) > 0 { registered = true }
            if rc > 0 { continue }
            if rc < 0 { throw failure(rc) }
            let left = deadline.remainingMicroseconds
            if left == 0 { throw .timedOut }
            let waited = sd.sd_bus_wait(bus, left)
            if waited < 0 && waited != -EINTR { throw failure(waited) }
        }
        do {
            return try (0..<calls.count).map { (i) throws(DBusError) -> Result<[DBusValue], DBusError> in
                try reply(pending.entry(i).pointee.message!, deadline: deadline)
            }
        } catch {
            throw error == .disconnected && !registered ? .authenticationRejected : error
        }
    }

    /// What a negative return of sd-bus means for the connection. A bus that hangs up before it accepted us
    /// refused us: a bus that does not take our credentials (another user's, say) closes the connection
    /// right after authentication, before answering `Hello`.
    private func failure(_ rc: Int32) -> DBusError {
        let error = Self.connectionError(rc)
        return error == .disconnected && !registered ? .authenticationRejected : error
    }

    /// Builds one call and hands it to sd-bus with a callback that keeps its reply in `reply`.
    private func send(_ call: BusCall, destination: String, reply: UnsafeMutablePointer<PendingReplies.Entry>,
                      deadline: Deadline) throws(DBusError) -> OpaquePointer? {
        var made: OpaquePointer?
        var rc = sd.sd_bus_message_new_method_call(bus, &made, destination, call.path, call.interface, call.member)
        guard rc >= 0, let m = made else { throw failure(rc) }
        defer { _ = sd.sd_bus_message_unref(m) }
        for argument in call.arguments {
            rc = Self.append(m, argument)
            guard rc >= 0 else { throw .protocolError("vaultctl could not build its \(call.member) call (\(errorText(rc)))") }
        }
        var slot: OpaquePointer?
        rc = sd.sd_bus_call_async(bus, &slot, m, PendingReplies.keep, reply, max(deadline.remainingMicroseconds, 1))
        guard rc >= 0 else { throw failure(rc) }
        return slot
    }

    /// Sends `call` (a prompt's `Prompt`) and waits, until `waitDeadline`, for the signal `member` of
    /// `interface` that the object at `path` of `destination`'s owner emits when it is done (the prompt's
    /// `Completed`); its values, or nil when it did not come in time. The match names the owner's unique name
    /// (asked first), so no other peer on the bus can complete the prompt for it, and it goes to the bus
    /// before the call (`sd_bus_add_match_async`; the bus handles one connection's messages in order), so the
    /// signal cannot slip past. An error reply to the call is thrown as `.remote`; a signal that cannot be
    /// read as `.protocolError`.
    func callAwaitingSignal(_ call: BusCall, destination: String, path: String, interface: String, member: String,
                            waitDeadline: Deadline, slowAnswer: (after: Deadline, say: () -> Void)? = nil) throws(DBusError) -> [DBusValue]? {
        let owner = try callAll([BusCall("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(destination)])],
                                destination: "org.freedesktop.DBus", deadline: waitDeadline)[0]
        guard case .success(let v) = owner, let sender = v.first?.string else {
            if case .failure(let error) = owner { throw error }
            throw .protocolError("the bus did not say who owns \(destination)")
        }
        let signal = PendingReplies(count: 1)
        var match: OpaquePointer?
        let rule = "type='signal',sender='\(sender)',interface='\(interface)',member='\(member)',path='\(path)'"
        let rc = sd.sd_bus_add_match_async(bus, &match, rule, PendingReplies.keep, nil, signal.entry(0))
        guard rc >= 0 else { throw failure(rc) }
        defer {
            _ = sd.sd_bus_slot_unref(match)
            withExtendedLifetime(signal) {}
        }
        if case .failure(let error) = try callAll([call], destination: destination, deadline: waitDeadline)[0] {
            throw error
        }
        var slow = slowAnswer
        while signal.answered == 0 {
            var left = waitDeadline.remainingMicroseconds
            if left == 0 { return nil }
            if let s = slow {
                // Said once, when the answer is slow to come (a prompt that needs a person), never before.
                if s.after.remainingMicroseconds == 0 {
                    s.say()
                    slow = nil
                } else {
                    left = min(left, s.after.remainingMicroseconds)
                }
            }
            let processed = sd.sd_bus_process(bus, nil)
            if processed > 0 { continue }
            if processed < 0 { throw failure(processed) }
            let waited = sd.sd_bus_wait(bus, left)
            if waited < 0 && waited != -EINTR { throw failure(waited) }
        }
        guard let values = Self.readAll(signal.entry(0).pointee.message!) else {
            throw .protocolError("the provider sent a \(member) signal this client cannot read")
        }
        return values
    }

    /// A reply as values, or its error. sd-bus answers a call whose reply did not come by the deadline, or
    /// whose connection closed, with a `NoReply` error of its own: that is the connection's failure, not the
    /// peer's. A `NoReply` from the bus while time is left (the provider exited without answering) is the
    /// bus's own words.
    private func reply(_ m: OpaquePointer, deadline: Deadline) throws(DBusError) -> Result<[DBusValue], DBusError> {
        if sd.sd_bus_message_is_method_error(m, nil) > 0 {
            let error = sd.sd_bus_message_get_error(m)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            let message = error?.pointee.message.map { String(cString: $0) } ?? name
            if name == "org.freedesktop.DBus.Error.NoReply" {
                if sd.sd_bus_is_open(bus) <= 0 { throw .disconnected }
                if deadline.remainingMicroseconds == 0 { throw .timedOut }
            }
            return .failure(.remote(name: name, message: message))
        }
        guard let values = Self.readAll(m) else {
            return .failure(.protocolError("the provider sent an answer this client cannot read"))
        }
        return .success(values)
    }

    /// What a negative return of sd-bus means for the connection.
    private static func connectionError(_ rc: Int32) -> DBusError {
        switch -rc {
        case EPERM, EACCES: return .authenticationRejected
        case ECONNRESET, ENOTCONN, EPIPE, ESHUTDOWN, ECONNABORTED: return .disconnected
        case ETIMEDOUT: return .timedOut
        case EBADMSG: return .protocolError("the bus sent a message sd-bus refused as invalid")
        default: return .protocolError("the bus connection failed (\(errorText(rc)))")
        }
    }

    // MARK: - Values into messages

    private static func code(_ c: Unicode.Scalar) -> CChar { CChar(bitPattern: UInt8(c.value)) }

    private static func basic<T: BitwiseCopyable>(_ m: OpaquePointer, _ type: Unicode.Scalar, _ value: T) -> Int32 {
        var v = value
        return sd.sd_bus_message_append_basic(m, code(type), &v)
    }

    /// Appends one value. The corresponding C functions are `sd_bus_message_append_basic`,
    /// `sd_bus_message_append_array` and `sd_bus_message_open_container`/`close_container`.
    private static func append(_ m: OpaquePointer, _ value: DBusValue) -> Int32 {
        switch value {
        case .byte(let v): return basic(m, "y", v)
        case .boolean(let v): return basic(m, "b", Int32(v ? 1 : 0))
        case .int16(let v): return basic(m, "n", v)
        case .uint16(let v): return basic(m, "q", v)
        case .int32(let v): return basic(m, "i", v)
        case .uint32(let v): return basic(m, "u", v)
        case .int64(let v): return basic(m, "x", v)
        case .uint64(let v): return basic(m, "t", v)
        case .double(let v): return basic(m, "d", v)
        case .string(let s): return s.withCString { sd.sd_bus_message_append_basic(m, code("s"), $0) }
        case .objectPath(let s): return s.withCString { sd.sd_bus_message_append_basic(m, code("o"), $0) }
        case .signature(let s): return s.withCString { sd.sd_bus_message_append_basic(m, code("g"), $0) }
        case .bytes(let b):
            let bytes = b.isEmpty ? [0] : b  // sd-bus wants a pointer even for no bytes
            return bytes.withUnsafeBytes { sd.sd_bus_message_append_array(m, code("y"), $0.baseAddress, b.count) }
        case .array(let element, let items):
            return container(m, "a", element) { items.lazy.map { append(m, $0) }.first { $0 < 0 } ?? 0 }
        case .structure(let fields):
            return container(m, "r", fields.map(\.signature).joined()) { fields.lazy.map { append(m, $0) }.first { $0 < 0 } ?? 0 }
        case .dictEntry(let k, let v):
            return container(m, "e", k.signature + v.signature) {
                let rc = append(m, k)
                return rc < 0 ? rc : append(m, v)
            }
        case .variant(let inner):
            return container(m, "v", inner.signature) { append(m, inner) }
        }
    }

    private static func container(_ m: OpaquePointer, _ type: Unicode.Scalar, _ contents: String, _ body: () -> Int32) -> Int32 {
        var rc = sd.sd_bus_message_open_container(m, code(type), contents)
        if rc >= 0 { rc = body() }
        return rc < 0 ? rc : sd.sd_bus_message_close_container(m)
    }

    // MARK: - Values out of messages

    /// Every value of a reply, by its signature; nil when one cannot be read.
    private static func readAll(_ m: OpaquePointer) -> [DBusValue]? {
        var out: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let rc = sd.sd_bus_message_peek_type(m, &type, &contents)
            if rc == 0 { return out }  // the end of the message, or of the container entered
            guard rc > 0, let value = read(m, type, contents) else { return nil }
            out.append(value)
        }
    }

    private static func readBasic<T: BitwiseCopyable>(_ m: OpaquePointer, _ type: CChar, _ zero: T) -> T? {
        var v = zero
        return sd.sd_bus_message_read_basic(m, type, &v) > 0 ? v : nil
    }

    private static func readText(_ m: OpaquePointer, _ type: CChar) -> String? {
        var p: UnsafePointer<CChar>?
        guard sd.sd_bus_message_read_basic(m, type, &p) > 0, let p else { return nil }
        return String(cString: p)  // sd-bus checked it is valid UTF-8 without NUL
    }

    /// One value whose type `sd_bus_message_peek_type` gave. The corresponding C functions are
    /// `sd_bus_message_read_basic`, `sd_bus_message_read_array` and `sd_bus_message_enter_container`.
    private static func read(_ m: OpaquePointer, _ type: CChar, _ contents: UnsafePointer<CChar>?) -> DBusValue? {
        switch Unicode.Scalar(UInt8(bitPattern: type)) {
        case "y": return readBasic(m, type, UInt8(0)).map(DBusValue.byte)
        case "b": return readBasic(m, type, Int32(0)).map { .boolean($0 != 0) }
        case "n": return readBasic(m, type, Int16(0)).map(DBusValue.int16)
        case "q": return readBasic(m, type, UInt16(0)).map(DBusValue.uint16)
        case "i": return readBasic(m, type, Int32(0)).map(DBusValue.int32)
        case "u": return readBasic(m, type, UInt32(0)).map(DBusValue.uint32)
        case "x": return readBasic(m, type, Int64(0)).map(DBusValue.int64)
        case "t": return readBasic(m, type, UInt64(0)).map(DBusValue.uint64)
        case "d": return readBasic(m, type, Double(0)).map(DBusValue.double)
        case "s": return readText(m, type).map(DBusValue.string)
        case "o": return readText(m, type).map(DBusValue.objectPath)
        case "g": return readText(m, type).map(DBusValue.signature)
        case "a":
            guard let contents else { return nil }
            let element = String(cString: contents)
            if element == "y" {
                var p: UnsafeRawPointer?
                var size = 0
                guard sd.sd_bus_message_read_array(m, code("y"), &p, &size) >= 0 else { return nil }
                return .bytes(size == 0 ? [] : Array(UnsafeRawBufferPointer(start: p, count: size)))
            }
            return inside(m, type, contents) { .array(element: element, $0) }
        case "r": return inside(m, type, contents) { .structure($0) }
        case "e": return inside(m, type, contents) { $0.count == 2 ? .dictEntry($0[0], $0[1]) : nil }
        case "v": return inside(m, type, contents) { $0.count == 1 ? .variant($0[0]) : nil }
        default: return nil  // file descriptors: nothing the Secret Service sends vaultctl
        }
    }

    private static func inside(_ m: OpaquePointer, _ type: CChar, _ contents: UnsafePointer<CChar>?,
                               _ make: ([DBusValue]) -> DBusValue?) -> DBusValue? {
        guard sd.sd_bus_message_enter_container(m, type, contents) > 0 else { return nil }
        guard let values = readAll(m), sd.sd_bus_message_exit_container(m) > 0 else { return nil }
        return make(values)
    }
}

/// The replies `callAll` waits for: one entry per call, filled by sd-bus's callback, and how many are in.
/// Not `Sendable`: sd-bus calls back on the thread that runs `sd_bus_process`, the caller's.
private final class PendingReplies {
    struct Entry {
        var message: OpaquePointer?
        var answered: UnsafeMutablePointer<Int>
    }

    private let entries: UnsafeMutablePointer<Entry>
    private let counter: UnsafeMutablePointer<Int>
    private let count: Int

    init(count: Int) {
        self.count = count
        counter = .allocate(capacity: 1)
        counter.initialize(to: 0)
        entries = .allocate(capacity: count)
        entries.initialize(repeating: Entry(message: nil, answered: counter), count: count)
    }

    deinit {
        for i in 0..<count { if let m = entries[i].message { _ = sd.sd_bus_message_unref(m) } }
        entries.deallocate()
        counter.deallocate()
    }

    var answered: Int { counter.pointee }

    /// sd-bus's callback for a reply or a signal: keeps the first message in the entry `userdata` points at.
    static let keep: sd_bus_message_handler_t = { message, userdata, _ in
        let entry = userdata!.assumingMemoryBound(to: Entry.self)
        if entry.pointee.message == nil {
            entry.pointee.message = sd.sd_bus_message_ref(message)
            entry.pointee.answered.pointee += 1
        }
        return 1
    }

    func entry(_ i: Int) -> UnsafeMutablePointer<Entry> { entries + i }
}

/// sd-bus's functions, from libsystemd loaded by the first `BusConnection.open` (CSystemd/shim.h says why it
/// is loaded, not linked), or why it could not be.
private let loadedSDBus = loadSDBus(soname: "libsystemd.so.0")

/// Loads the library named `soname` (once per process: see `loadedSDBus`).
func loadSDBus(soname: String) -> Result<vaultctl_sd_bus, DBusError> {
    let table = UnsafeMutablePointer<vaultctl_sd_bus>.allocate(capacity: 1)
    defer { table.deallocate() }
    var error: UnsafePointer<CChar>?
    guard vaultctl_sd_bus_load(table, soname, &error) == 0 else {
        return .failure(.libraryUnavailable(error.map { String(cString: $0) } ?? "\(soname) could not be loaded"))
    }
    return .success(table.pointee)
}

/// A table of function addresses, written once by the loader and only read after: safe to share.
extension vaultctl_sd_bus: @unchecked @retroactive Sendable {}

/// The loaded functions. Only reached once `BusConnection.open` found them loaded.
private var sd: vaultctl_sd_bus { try! loadedSDBus.get() }

/// The words of a negative errno that sd-bus returned.
private func errorText(_ rc: Int32) -> String { String(cString: strerror(-rc)) }
