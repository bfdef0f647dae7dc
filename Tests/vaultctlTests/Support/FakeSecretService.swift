#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import Slots

/// A scripted stand-in for a bus with a Secret Service on it, to force what a real one rarely does: refuse
/// the credentials, offer only `plain`, send a bad key, answer with an error, cut a reply short, go silent.
///
/// It listens on a Unix socket, answers the authentication, then reads each method call (framed and parsed
/// with vaultctl's own wire format, which the unit tests pin against hand-worked bytes) and answers as
/// `answer` says. Replies go out in small pieces, so the client's reassembly is exercised every time.
final class FakeSecretService: @unchecked Sendable {
    enum Answer {
        case reply(signature: String, [DBusValue])
        case error(name: String, message: String)
        /// Half of a reply, then the connection closes.
        case cutShort
        /// Nothing, ever.
        case silence
    }

    let path: String
    private let listener: Int32
    private let rejectCredentials: Bool
    private let answer: @Sendable (DBusMessage) -> Answer
    private let thread: Thread

    init(rejectCredentials: Bool = false, answer: @escaping @Sendable (DBusMessage) -> Answer) throws {
        let (path, fd) = try UnixListener.make("fakebus", backlog: 16)
        self.path = path
        listener = fd
        self.rejectCredentials = rejectCredentials
        self.answer = answer
        let reject = rejectCredentials
        thread = Thread { FakeSecretService.serve(fd, reject: reject, answer: answer) }
        thread.start()
    }

    var address: String { "unix:path=\(path)" }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }

    /// Each connection in turn, until the listener closes.
    private static func serve(_ listener: Int32, reject: Bool, answer: @Sendable (DBusMessage) -> Answer) {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 { return }
            converse(c, reject: reject, answer: answer)
            close(c)
        }
    }

    private static func converse(_ c: Int32, reject: Bool, answer: (DBusMessage) -> Answer) {
        var inbox: [UInt8] = []
        // Authentication: everything up to "BEGIN\r\n" (the client pipelines AUTH, BEGIN and its first
        // messages, so this is found in bytes: what follows is binary).
        let begin = Array("BEGIN\r\n".utf8)
        func beginEnd() -> Int? {
            guard inbox.count >= begin.count else { return nil }
            for i in 0...(inbox.count - begin.count) where inbox[i..<(i + begin.count)].elementsEqual(begin) { return i + begin.count }
            return nil
        }
        while beginEnd() == nil {
            guard receive(c, into: &inbox) else { return }
        }
        if reject {
            send(c, Array("REJECTED EXTERNAL\r\n".utf8))
            return
        }
        send(c, Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
        inbox.removeFirst(beginEnd()!)
        var serial: UInt32 = 1000
        while true {
            guard let length = try? DBusMessage.length(ofMessageIn: inbox[...]), inbox.count >= length else {
                guard receive(c, into: &inbox) else { return }
                continue
            }
            guard let call = try? DBusMessage.parse(Array(inbox[..<length])) else { return }
            inbox.removeFirst(length)
            var reply = DBusMessage(kind: .methodReturn)
            reply.replySerial = call.serial
            reply.destination = call.sender
            let response: Answer = call.member == "Hello" ? .reply(signature: "s", [.string(":1.42")]) : answer(call)
            switch response {
            case .reply(let signature, let values):
                var body = DBusEncoder()
                for v in values { body.write(v) }
                reply.signature = signature
                reply.body = body.bytes
            case .error(let name, let message):
                reply.kind = .error
                reply.errorName = name
                reply.signature = "s"
                var body = DBusEncoder()
                body.write(.string(message))
                reply.body = body.bytes
            case .cutShort:
                reply.signature = "ao"
                var body = DBusEncoder()
                body.write(.array(element: "o", [.objectPath("/org/freedesktop/secrets/collection/fake/1")]))
                reply.body = body.bytes
                serial += 1
                let bytes = reply.encoded(serial: serial)
                send(c, Array(bytes.prefix(bytes.count / 2)))
                return
            case .silence:
                while receive(c, into: &inbox) {}
                return
            }
            serial += 1
            let bytes = reply.encoded(serial: serial)
            for start in stride(from: 0, to: bytes.count, by: 7) {  // in pieces: the client must put them together
                send(c, Array(bytes[start..<min(start + 7, bytes.count)]))
            }
        }
    }

    private static func receive(_ c: Int32, into inbox: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { recv(c, $0.baseAddress!, $0.count, 0) }
        guard n > 0 else { return false }
        inbox += chunk[..<n]
        return true
    }

    private static func send(_ c: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(c, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    // MARK: A provider with one collection holding one vaultctl item

    static let collection = "/org/freedesktop/secrets/collection/fake"
    static let item = "\(collection)/1"

    /// The usual answers of a provider whose default collection is unlocked and holds `item` for every slot;
    /// `openSession` is what it says to a key exchange.
    static func provider(openSession: @escaping @Sendable (DBusMessage) -> Answer) -> @Sendable (DBusMessage) -> Answer {
        { call in
            switch call.member {
            case "ReadAlias": return .reply(signature: "o", [.objectPath(collection)])
            case "SearchItems": return .reply(signature: "ao", [.array(element: "o", [.objectPath(item)])])
            case "Get":
                let property = call.arguments()?.dropFirst().first?.string
                switch property {
                case "Locked": return .reply(signature: "v", [.variant(.boolean(false))])
                case "Label": return .reply(signature: "v", [.variant(.string("Fake"))])
                default: return .error(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no such property")
                }
            case "OpenSession": return openSession(call)
            default: return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "not scripted")
            }
        }
    }
}
