#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A peer that plays a bus at the byte level, for what no real bus or service object does: refuse the
/// credentials, or cut its first message short and hang up. (Everything a provider may answer is played by a
/// real service object on a real bus instead: `SecretServiceInstance` with a `scripted` kind.)
///
/// It listens on a Unix socket and answers each connection's authentication (sd-bus sends `AUTH EXTERNAL`,
/// `NEGOTIATE_UNIX_FD` and `BEGIN` in one go), then does what `behaviour` says.
final class RawBusPeer: @unchecked Sendable {
    enum Behaviour: Sendable {
        /// `REJECTED`, as a bus that does not accept the client's user.
        case rejectCredentials
        /// Authentication accepted, then the first 8 bytes of a reply and the connection closes.
        case cutShort
    }

    let path: String
    private let listener: Int32
    private let thread: Thread

    init(_ behaviour: Behaviour) throws {
        let (path, fd) = try UnixListener.make("rawbus", backlog: 16)
        self.path = path
        listener = fd
        thread = Thread { RawBusPeer.serve(fd, behaviour) }
        thread.start()
    }

    var address: String { "unix:path=\(path)" }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }

    private static func serve(_ listener: Int32, _ behaviour: Behaviour) {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 { return }
            converse(c, behaviour)
            close(c)
        }
    }

    private static func converse(_ c: Int32, _ behaviour: Behaviour) {
        var inbox: [UInt8] = []
        while !contains(inbox, "BEGIN\r\n") {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { recv(c, $0.baseAddress!, $0.count, 0) }
            guard n > 0 else { return }
            inbox += chunk[..<n]
        }
        switch behaviour {
        case .rejectCredentials:
            send(c, "REJECTED EXTERNAL\r\n")
        case .cutShort:
            send(c, "OK 0123456789abcdef0123456789abcdef\r\n")
            if contains(inbox, "NEGOTIATE_UNIX_FD\r\n") { send(c, "AGREE_UNIX_FD\r\n") }
            // A method return's fixed header (little-endian, type 2, version 1) announcing a 4-byte body and
            // 8 bytes of header fields, then nothing more.
            let half: [UInt8] = [0x6c, 0x02, 0x01, 0x01, 0x04, 0x00, 0x00, 0x00]
            _ = half.withUnsafeBytes { Glibc.send(c, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    private static func send(_ c: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(c, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
