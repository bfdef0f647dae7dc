/// Whether a session is near this machine (the console, the LAN) or comes from afar (Tailscale, the internet).
///
/// `Sendable`: a plain value.
public enum OriginVerdict: String, Sendable {
    case nearby, remote
}

/// Where this process's session comes from, as judged by ``OriginJudge``.
///
/// `Sendable`: plain values.
public struct Origin: Sendable, Equatable {
    public let verdict: OriginVerdict
    /// Short words for logs and messages, e.g. "local session", "ssh from 192.168.1.20",
    /// "ssh from 100.64.1.2 (in remote range 100.64.0.0/10)",
    /// "ssh from an address that cannot be judged ('foo.example')".
    public let description: String

    public init(verdict: OriginVerdict, description: String) {
        self.verdict = verdict
        self.description = description
    }
}
