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
        if zone == nil, let v4 = IPAddress.parseV4(t) {
            bytes = [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + v4
        } else if let v6 = IPAddress.parseV6(t), zone.map({ IPAddress.isZone($0) }) ?? true {
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

    /// ASCII digits only, and no leading zero ("010" could mean octal 8 to another parser), as `inet_pton` does.
    static func isDecimalOctet(_ p: Substring) -> Bool {
        !p.isEmpty && p.count <= 3 && p.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && (p.count == 1 || p.first != "0")
    }

    /// One to four ASCII hex digits (`UInt16(_:radix:)` alone would also take a sign, "+1").
    static func isHexGroup(_ p: Substring) -> Bool {
        (1...4).contains(p.utf8.count) && p.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66)
        }
    }

    static func parseV4(_ t: Substring) -> [UInt8]? {
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard isDecimalOctet(p), let v = UInt8(p) else { return nil }
            out.append(v)
        }
        return out
    }

    static func parseV6(_ t: Substring) -> [UInt8]? {
        guard t.contains(":"), t.utf8.count <= 45, t.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        let halves = splitOnGap(String(t))
        guard halves.count <= 2 else { return nil }
        let sawGap = halves.count == 2
        func groups(_ s: String, allowV4Tail: Bool) -> [UInt16]? {
            if s.isEmpty { return [] }
            var out: [UInt16] = []
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            for (i, p) in parts.enumerated() {
                if allowV4Tail, i == parts.count - 1, p.contains("."), let v4 = parseV4(p) {
                    out.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    out.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard isHexGroup(p), let v = UInt16(p, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let h = groups(halves[0], allowV4Tail: !sawGap) else { return nil }
        head = h
        if sawGap {
            guard let tl = groups(halves[1], allowV4Tail: true) else { return nil }
            tail = tl
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard head.count == 8 else { return nil }
        }
        let all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    /// Splits ASCII text at each "::", left to right without overlap (":::" gives "" and ":").
    static func splitOnGap(_ s: String) -> [String] {
        let b = Array(s.utf8)
        var pieces: [String] = []
        var start = 0
        var i = 0
        while i + 1 < b.count {
            if b[i] == 0x3a, b[i + 1] == 0x3a {
                pieces.append(String(decoding: b[start..<i], as: UTF8.self))
                i += 2
                start = i
            } else {
                i += 1
            }
        }
        pieces.append(String(decoding: b[start...], as: UTF8.self))
        return pieces
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
