import GateProtocol
import Slots
import VaultRules

/// The slot a git credential is kept in: `git_PROTOCOL_USER@HOST`, or `git_PROTOCOL_HOST` without a user
/// (for example `git_https_alice@github.com`, `git_https_bob@example.org+3A8443`).
///
/// Each part keeps ASCII letters, digits, `.` and `-`; every other byte becomes `+` and two upper-case hex
/// digits (UTF-8), so `_` and `@` only ever separate and the mapping is one-to-one and reversible. The
/// path is not part of the name (one credential per protocol, host and user, as git-credential-store
/// keeps it). A name longer than a slot name may be (128 characters) has no slot.
public enum CredentialSlotName {
    public static let prefix = "git_"

    public static func name(scheme: String, host: String, username: String?) -> SlotName? {
        guard !scheme.isEmpty, !host.isEmpty else { return nil }
        var raw = prefix + encode(scheme) + "_"
        if let username, !username.isEmpty { raw += encode(username) + "@" }
        raw += encode(host)
        return SlotName(raw)
    }

    /// The protocol, host and user a credential slot's name stands for; nil for other slots.
    public static func parts(of name: SlotName) -> (scheme: String, host: String, username: String?)? {
        let raw = name.rawValue
        guard raw.hasPrefix(prefix) else { return nil }
        let rest = raw.dropFirst(prefix.count)
        guard let sep = rest.firstIndex(of: "_") else { return nil }
        let tail = rest[rest.index(after: sep)...]
        let user: Substring?
        let host: Substring
        if let at = tail.firstIndex(of: "@") {
            user = tail[..<at]
            host = tail[tail.index(after: at)...]
        } else {
            user = nil
            host = tail
        }
        guard let scheme = decode(rest[..<sep]), let h = decode(host), !scheme.isEmpty, !h.isEmpty else { return nil }
        if let user {
            guard let u = decode(user), !u.isEmpty else { return nil }
            return (scheme, h, u)
        }
        return (scheme, h, nil)
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "+"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return out
    }

    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let b = utf8.popFirst() {
            guard b == UInt8(ascii: "+") else {
                guard b != UInt8(ascii: "_"), b != UInt8(ascii: "@") else { return nil }
                bytes.append(b)
                continue
            }
            guard utf8.count >= 2, let hi = hexValue(utf8.popFirst()!), let lo = hexValue(utf8.popFirst()!) else { return nil }
            bytes.append(hi << 4 | lo)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
