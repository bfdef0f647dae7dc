/// Turns ``OriginEvidence`` into a verdict.
///
/// An address is nearby only if it lies in one of `nearbyRanges` and in none of `remoteRanges`; anything
/// else (a public address, a host name, garbage) counts as remote, because it cannot be judged.
///
/// The order:
/// 1. Unforgeable evidence. The utmp host of our terminal: empty or an X display (":0", ":1.0") is a
///    local session, anything else is judged as an address. An sshd ancestor: its socket's peer is judged;
///    with no peer and no address from utmp either, the session is remote ("cannot be judged"). When
///    several of these speak, the stricter wins.
/// 2. `SSH_CONNECTION` and `SSH_CLIENT` may turn a nearby verdict remote (a client address that is remote
///    or cannot be parsed), never the other way. An empty variable counts as unset.
/// 3. No evidence at all: a local session.
///
/// A login address on loopback (127.0.0.0/8, ::1) cannot be judged: `ssh localhost` or a forwarded port
/// hides where the person really is, so it counts as remote.
public enum OriginJudge {
    public static func judge(_ evidence: OriginEvidence, remoteRanges: [IPRange], nearbyRanges: [IPRange]) -> Origin {
        let ranges = Ranges(remote: remoteRanges, nearby: nearbyRanges)
        var firm: Origin? = nil
        var sawAddress = false  // an IP literal from an unforgeable source

        if let host = evidence.utmpHost {
            if host.isEmpty {
                firm = Origin(verdict: .nearby, description: "local session")
            } else if isXDisplay(host) {
                firm = Origin(verdict: .nearby, description: "local session (display \(host))")
            } else {
                sawAddress = IPAddress(host) != nil
                firm = ranges.classify(host, as: evidence.sshdAncestor ? "ssh from" : "login from")
            }
        }
        if evidence.sshdAncestor {
            if let peer = evidence.sshdPeer, !peer.isEmpty {
                firm = stricter(firm, ranges.classify(peer, as: "ssh from"))
            } else if !sawAddress {
                firm = stricter(firm, Origin(verdict: .remote,
                                             description: "ssh session from an address that cannot be judged (sshd's peer is not readable)"))
            }
        }

        var origin = firm ?? Origin(verdict: .nearby, description: "local session")
        for (name, value, fields) in [("SSH_CONNECTION", evidence.sshConnection, 4), ("SSH_CLIENT", evidence.sshClient, 3)] {
            guard origin.verdict == .nearby, let value else { continue }
            if let said = ranges.classifyVariable(name, value, fields: fields), said.verdict == .remote {
                origin = said
            }
        }
        return origin
    }

    /// ":0", ":1", ":1.0": an X display, which is what terminal emulators put in `ut_host`.
    static func isXDisplay(_ host: String) -> Bool {
        let parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard host.utf8.first == UInt8(ascii: ":"), (1...2).contains(parts.count) else { return false }
        let digits = { (p: Substring.UTF8View.SubSequence) in !p.isEmpty && p.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        return digits(parts[0].dropFirst()) && (parts.count == 1 || digits(parts[1]))
    }

    static func stricter(_ a: Origin?, _ b: Origin) -> Origin {
        guard let a else { return b }
        return a.verdict == .nearby && b.verdict == .remote ? b : a
    }

    /// Text from outside (utmp, the environment) made safe for one log line: no control characters, bounded.
    package static func quoted(_ text: String) -> String {
        var out = ""
        for (i, scalar) in text.unicodeScalars.enumerated() {
            if i == 64 { out += "…"; break }
            let printable = scalar.value >= 0x20 && scalar.value != 0x7f && !(0x80...0x9f).contains(scalar.value)
                && scalar.properties.generalCategory != .format && scalar != "'"
            out.unicodeScalars.append(printable ? scalar : "?")
        }
        return "'\(out)'"
    }

    struct Ranges {
        let remote: [IPRange]
        let nearby: [IPRange]

        func classify(_ text: String, as prefix: String, source: String = "") -> Origin {
            guard let address = IPAddress(text) else {
                return Origin(verdict: .remote, description: "\(prefix) an address that cannot be judged\(source) (\(quoted(text)))")
            }
            let shown = quoted(text).dropFirst().dropLast()
            // A login over loopback (`ssh localhost`, a forwarded port) hides where the person really is.
            if IPRange.loopback.contains(where: { $0.contains(address) }) {
                return Origin(verdict: .remote, description: "\(prefix) \(shown)\(source) (loopback hides the real origin: a tunnel or ssh localhost)", address: String(shown))
            }
            if let range = remote.first(where: { $0.contains(address) }) {
                return Origin(verdict: .remote, description: "\(prefix) \(shown)\(source) (in remote range \(range))", address: String(shown))
            }
            guard nearby.contains(where: { $0.contains(address) }) else {
                return Origin(verdict: .remote, description: "\(prefix) \(shown)\(source) (not in a nearby range)", address: String(shown))
            }
            return Origin(verdict: .nearby, description: "\(prefix) \(shown)\(source)", address: String(shown))
        }

        /// Judges the client address of `SSH_CONNECTION` or `SSH_CLIENT`; nil for an empty variable.
        /// A variable of the wrong shape (field count, non-numeric ports) cannot be judged.
        func classifyVariable(_ name: String, _ value: String, fields count: Int) -> Origin? {
            let fields = value.split(separator: " ", omittingEmptySubsequences: true)
            if fields.isEmpty { return nil }
            let isPort = { (f: Substring) in (1...5).contains(f.utf8.count) && f.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && Int(f)! <= 65535 }
            let portIndexes = count == 4 ? [1, 3] : [1, 2]
            guard fields.count == count, portIndexes.allSatisfy({ isPort(fields[$0]) }),
                  count == 3 || IPAddress(String(fields[2])) != nil else {
                return Origin(verdict: .remote, description: "ssh from an address that cannot be judged per \(name) (\(quoted(value)))")
            }
            return classify(String(fields[0]), as: "ssh from", source: " per \(name)")
        }
    }
}
