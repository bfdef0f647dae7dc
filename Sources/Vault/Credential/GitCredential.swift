import GateProtocol
import Slots
import VaultRules

/// One credential description in git's credential protocol (`key=value` lines, ended by a blank line or
/// the end of input), as `git credential` hands it to a helper.
///
/// Only `protocol`, `host`, `path`, `username` and `password` are kept; every other key (`url`,
/// `wwwauth[]`, `capability[]`, `password_expiry_utc`, …) is ignored, as the protocol asks. Each line is
/// read into `SecretBytes`, so the password never passes through a `String`.
public struct GitCredential {
    public var scheme: String?
    public var host: String?
    public var path: String?
    public var username: String?
    public var password: SecretBytes?

    public init(scheme: String? = nil, host: String? = nil, path: String? = nil, username: String? = nil,
                password: SecretBytes? = nil) {
        self.scheme = scheme
        self.host = host
        self.path = path
        self.username = username
        self.password = password
    }

    /// Why a description could not be read.
    public enum ReadError: Error, Equatable {
        case lineTooLong
        case tooManyLines
        case failed(Int32)
    }

    /// The longest line taken (a password may be a secret of the largest size), and the most lines.
    static let lineLimit = SecretBytes.maximumCount + 64
    static let maximumLines = 1000

    /// Reads one description from `fd`.
    public static func read(fd: Int32) throws(ReadError) -> GitCredential {
        var credential = GitCredential()
        for _ in 0..<maximumLines {
            switch SecretReader.readLine(fd: fd, limit: lineLimit) {
            case .endOfInput: return credential
            case .tooLong: throw .lineTooLong
            case .failed(let e): throw .failed(e)
            case .line(let line):
                if line.isEmpty { return credential }
                credential.take(line)
            }
        }
        throw .tooManyLines
    }

    /// Keeps the value of one `key=value` line when the key is one this helper uses.
    mutating func take(_ line: SecretBytes) {
        line.withUnsafeBytes { raw in
            guard let eq = raw.firstIndex(of: UInt8(ascii: "=")) else { return }
            let key = String(decoding: raw[..<eq], as: UTF8.self)
            let valueBytes = UnsafeRawBufferPointer(rebasing: raw[(eq + 1)...])
            if key == "password" {
                password = SecretBytes(copying: valueBytes)
                return
            }
            let value = String(decoding: valueBytes, as: UTF8.self)
            switch key {
            case "protocol": scheme = value
            case "host": host = value
            case "path": path = value
            case "username": username = value
            default: break
            }
        }
    }
}
