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
    /// The client's IP address, when the verdict was reached from one (it is in `description` too).
    public let address: String?

    public init(verdict: OriginVerdict, description: String, address: String? = nil) {
        self.verdict = verdict
        self.description = description
        self.address = address
    }

    /// What PAM is told as `PAM_RHOST` (so that modules which refuse remote sessions, as pam_fprintd does, refuse
    /// by themselves too): nil for a nearby session; for a remote one its address, or `remote.invalid` when
    /// none is known (a reserved name with a dot: pam_access's LOCAL, any name without one, never matches it).
    public var pamRemoteHost: String? {
        guard verdict == .remote else { return nil }
        return address ?? "remote.invalid"
    }

    /// Equal when the verdict and the words are (the address is in the words).
    public static func == (a: Origin, b: Origin) -> Bool {
        a.verdict == b.verdict && a.description == b.description
    }
}
