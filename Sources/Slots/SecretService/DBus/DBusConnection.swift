#if canImport(Glibc)
import Glibc
#endif

/// A connection to a D-Bus bus over a Unix socket, with the few parts of the protocol vaultctl needs:
/// EXTERNAL authentication, `Hello`, method calls and their replies.
///
/// Nothing here waits without a deadline: every read and write polls with the time the caller has left,
/// so a bus that accepts and never answers is `timedOut`, not a hang. Calls may be pipelined (`callAll`):
/// they are sent without waiting and their replies matched by serial, so N calls cost one round trip.
/// Not `Sendable`: one thread uses it at a time (the Secret Service slot holds it under a mutex).
final class DBusConnection {
    private let fd: Int32
    private var inbox: [UInt8] = []
    private var inboxStart = 0
    /// What one `recv` reads into, allocated once.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private var lastSerial: UInt32 = 0
    /// Whether the "OK" line of the authentication has been read.
    private var authenticated = false

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }

    /// Connects to the first of `addresses` that accepts, authenticates and says `Hello`, all in one write.
    static func open(_ addresses: [BusAddress], deadline: Deadline) throws(DBusError) -> DBusConnection {
        guard !addresses.isEmpty else { throw .noAddress }
        var reason = ""
        for address in addresses {
            switch connect(address, deadline: deadline) {
            case .connected(let fd):
                let c = DBusConnection(fd: fd)
                var greeting = Array("\0AUTH EXTERNAL \(hex(String(geteuid())))\r\nBEGIN\r\n".utf8)
                greeting += c.stamp(DBusMessage.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")).bytes
                try c.write(greeting, deadline: deadline)
                return c
            case .failed(let why):
                reason = "could not connect to \(address.description): \(why)"
            }
        }
        throw .cannotConnect(reason)
    }

    private static func hex(_ s: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: s.utf8.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    private enum Connected {
        case connected(Int32)
        case failed(String)
    }

    private static func connect(_ address: BusAddress, deadline: Deadline) -> Connected {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failed(String(cString: strerror(errno))) }
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        let (path, isAbstract): ([UInt8], Bool)
        switch address {
        case .path(let p): (path, isAbstract) = (Array(p.utf8), false)
        case .abstract(let a): (path, isAbstract) = (Array(a.utf8), true)
        }
        let capacity = MemoryLayout.size(ofValue: sa.sun_path)
        guard path.count + 1 <= capacity else {
            close(fd)
            return .failed("the socket path is too long")
        }
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            let start = isAbstract ? 1 : 0  // an abstract name starts with a NUL byte
            for (i, b) in path.enumerated() { raw[start + i] = b }
        }
        // A path counts its closing NUL; an abstract name has no closing NUL but a leading one.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + 1)
        // On a Unix socket, EAGAIN means the listener's backlog is full (not "in progress"): try again
        // until the deadline.
        var rc: Int32
        while true {
            rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
            if rc == 0 || (errno != EAGAIN && errno != EINTR) { break }
            if deadline.remainingMilliseconds == 0 {
                errno = ETIMEDOUT
                break
            }
            usleep(1000)
        }
        if rc != 0 && errno == EINPROGRESS {
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat { ready = poll(&p, 1, deadline.remainingMilliseconds) } while ready < 0 && errno == EINTR
            if ready == 1 {
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                rc = err == 0 ? 0 : -1
                if err != 0 { errno = err }
            } else {
                errno = ETIMEDOUT
            }
        }
        guard rc == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            return .failed(why)
        }
        return .connected(fd)
    }

    /// Gives `message` the next serial; returns the bytes to send and the serial.
    private func stamp(_ message: DBusMessage) -> (bytes: [UInt8], serial: UInt32) {
        lastSerial &+= 1
        if lastSerial == 0 { lastSerial = 1 }
        return (message.encoded(serial: lastSerial), lastSerial)
    }

    /// Sends one call and waits for its reply. An error reply throws `.remote`.
    func call(_ message: DBusMessage, deadline: Deadline) throws(DBusError) -> DBusMessage {
        try callAll([message], deadline: deadline)[0].get()
    }

    /// Sends every call without waiting (at most `window` unanswered at once, below dbus-daemon's limit of
    /// pending replies per connection) and gathers the replies. A failure of the connection throws; an error
    /// reply is that call's `.failure(.remote)`.
    func callAll(_ messages: [DBusMessage], window: Int = 64,
                 deadline: Deadline) throws(DBusError) -> [Result<DBusMessage, DBusError>] {
        var results = [Result<DBusMessage, DBusError>?](repeating: nil, count: messages.count)
        var waiting: [UInt32: Int] = [:]
        var next = 0
        var done = 0
        while done < messages.count {
            var batch: [UInt8] = []
            while next < messages.count && waiting.count < window {
                let (bytes, serial) = stamp(messages[next])
                batch += bytes
                waiting[serial] = next
                next += 1
            }
            if !batch.isEmpty {
                do { try write(batch, deadline: deadline) } catch {
                    // A bus that refused our credentials may hang up before we read its answer: say so.
                    if error == .disconnected && !authenticated { _ = try receive(deadline: deadline) }
                    throw error
                }
            }
            let reply = try receive(deadline: deadline)
            guard reply.kind == .methodReturn || reply.kind == .error,
                  let serial = reply.replySerial, let index = waiting.removeValue(forKey: serial) else {
                continue  // a signal (NameAcquired), the Hello reply, or a late reply to an abandoned call
            }
            results[index] = reply.kind == .error
                ? .failure(.remote(name: reply.errorName ?? "org.freedesktop.DBus.Error.Failed", message: reply.errorMessage))
                : .success(reply)
            done += 1
        }
        return results.map { $0! }
    }

    private func write(_ bytes: [UInt8], deadline: Deadline) throws(DBusError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try wait(for: Int16(POLLOUT), deadline: deadline)
                continue
            }
            throw .disconnected
        }
    }

    private func wait(for events: Int16, deadline: Deadline) throws(DBusError) {
        while true {
            let ms = deadline.remainingMilliseconds
            if ms == 0 { throw .timedOut }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, ms)
            if rc < 0 && errno == EINTR { continue }
            if rc < 0 { throw .disconnected }
            if rc == 0 { throw .timedOut }
            return
        }
    }

    /// Reads more bytes into the inbox; throws when the peer has closed or the deadline passes.
    private func fill(deadline: Deadline) throws(DBusError) {
        if inboxStart > 0 && inboxStart == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxStart = 0
        } else if inboxStart > 1 << 20 {
            inbox.removeFirst(inboxStart)
            inboxStart = 0
        }
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 {
                inbox += chunk[0..<n]
                return
            }
            if n == 0 { throw .disconnected }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                try wait(for: Int16(POLLIN), deadline: deadline)
                continue
            }
            throw .disconnected
        }
    }

    /// The next message from the bus (after the authentication's "OK" line, the first time).
    private func receive(deadline: Deadline) throws(DBusError) -> DBusMessage {
        while !authenticated {
            if let lineEnd = lineEnd() {
                let line = String(decoding: inbox[inboxStart..<lineEnd], as: UTF8.self)
                inboxStart = lineEnd + 2
                guard line.hasPrefix("OK ") else { throw .authenticationRejected }
                authenticated = true
                break
            }
            if inbox.count - inboxStart > 4096 { throw .protocolError("the bus sent no authentication answer") }
            try fill(deadline: deadline)
        }
        while true {
            if let length = try DBusMessage.length(ofMessageIn: inbox[inboxStart...]), inbox.count - inboxStart >= length,
               DBusMessage.Kind(rawValue: inbox[inboxStart + 1]) == nil {
                inboxStart += length  // a message type this client does not know: the specification says to ignore it
                continue
            }
            if let length = try DBusMessage.length(ofMessageIn: inbox[inboxStart...]), inbox.count - inboxStart >= length {
                // A copy of exactly the message: an Array made from a slice that spans the whole inbox shares its
                // (64 KiB) storage, and list keeps a reply per item (1000 items held 64 MiB that way).
                let start = inboxStart
                let raw = [UInt8](unsafeUninitializedCapacity: length) { out, count in
                    inbox.withUnsafeBufferPointer { src in
                        _ = out.initialize(from: src[start..<(start + length)])
                    }
                    count = length
                }
                inboxStart += length
                return try DBusMessage.parse(raw)
            }
            try fill(deadline: deadline)
        }
    }

    private func lineEnd() -> Int? {
        var i = inboxStart
        while i + 1 < inbox.count {
            if inbox[i] == 0x0D && inbox[i + 1] == 0x0A { return i }
            i += 1
        }
        return nil
    }
}
