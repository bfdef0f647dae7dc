#if canImport(Glibc)
import Glibc
#endif
/// An IPv4 or IPv6 address as 16 bytes (IPv4 as IPv4-mapped IPv6, `::ffff:a.b.c.d`), so one range check
/// covers both spellings of an IPv4 peer.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]  // always 16

    public init?(_ text: String) {
        var t = Substring(text)
        if t.hasPrefix("["), t.hasSuffix("]") { t = t.dropFirst().dropLast() }
        var zone: Substring? = nil
        if let pct = t.firstIndex(of: "%") {  // fe80::1%eth0: a zone is only for IPv6, and not empty
            zone = t[t.index(after: pct)...]
            t = t[..<pct]
        }
        if zone == nil, let v4 = IPAddress.parse(t, family: AF_INET) {
            bytes = [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + v4
        } else if let v6 = IPAddress.parse(t, family: AF_INET6), zone.map({ IPAddress.isZone($0) }) ?? true {
            bytes = v6
        } else {
            return nil
        }
    }

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16)
        self.bytes = bytes
    }

    /// Whether this is an IPv4 address (or IPv4-mapped IPv6).
    public var isV4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff }

    /// Dotted quad for IPv4 (and IPv4-mapped), otherwise the RFC 5952 form: lower-case hex, no leading
    /// zeros, the longest run of two or more zero groups (the first of equal runs) written `::`.
    public var description: String {
        if isV4 { return bytes[12...].map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best = (start: -1, count: 0)
        var i = 0
        while i < 8 {
            guard groups[i] == 0 else { i += 1; continue }
            var j = i
            while j < 8, groups[j] == 0 { j += 1 }
            if j - i > best.count { best = (i, j - i) }
            i = j
        }
        func text(_ range: Range<Int>) -> String { groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        guard best.count >= 2 else { return text(0..<8) }
        return text(0..<best.start) + "::" + text((best.start + best.count)..<8)
    }

    /// A zone (scope) name after `%`: an interface name or number, nothing that could hide more text.
    static func isZone(_ z: Substring) -> Bool {
        !z.isEmpty && z.count <= 64 && z.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7f && $0 != "%" }
    }

    /// The C library's parser (`inet_pton`), which takes only the standard spellings: four decimal octets
    /// without leading zeros (`010` could mean octal 8 to another parser) and no sign, hex or short forms;
    /// for IPv6, groups of one to four hex digits, one `::`, and an IPv4 tail. A NUL byte, which would end
    /// the C string early, is refused first.
    static func parse(_ t: Substring, family: Int32) -> [UInt8]? {
        guard !t.isEmpty, t.utf8.count <= 45, !t.utf8.contains(0) else { return nil }
        var out = [UInt8](repeating: 0, count: family == AF_INET ? 4 : 16)
        let ok = String(t).withCString { text in out.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) } }
        return ok == 1 ? out : nil
    }
}

/// A CIDR range such as `100.64.0.0/10` or `fd7a:115c:a1e0::/48`. An IPv4 range also matches the
/// IPv4-mapped IPv6 spelling of its addresses.
public struct IPRange: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    /// Prefix length over the 16-byte form (an IPv4 /10 is stored as /106).
    public let prefix: Int
    public let description: String

    /// 127.0.0.0/8 and ::1/128.
    public static let loopback: [IPRange] = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!]

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].contains("%"), !parts[0].hasPrefix("["),
              let address = IPAddress(String(parts[0])),
              (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let bits = Int(parts[1]) else { return nil }
        let isV4 = !parts[0].contains(":")
        guard isV4 ? (0...32).contains(bits) : (0...128).contains(bits) else { return nil }
        prefix = isV4 ? bits + 96 : bits
        network = address
        description = text
    }

    public func contains(_ address: IPAddress) -> Bool {
        var remaining = prefix
        for i in 0..<16 where remaining > 0 {
            let take = min(8, remaining)
            let mask: UInt8 = take == 8 ? 0xff : ~(0xff >> UInt8(take))
            if address.bytes[i] & mask != network.bytes[i] & mask { return false }
            remaining -= take
        }
        return true
    }
}
