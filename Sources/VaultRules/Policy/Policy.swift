/// What this user allows: which networks count as remote or nearby, how failures are rate-limited, and the
/// defaults for new slots. Read from a versioned JSON document.
///
/// The defaults are `builtIn`, written once, here; `policy/default.json` is the same policy as a document
/// with every field written out (a test reads the shipped file and compares it with `builtIn`, field by
/// field), installed as root's `/etc/vaultctl/policy.json` and as the example in the documentation. A user's
/// own copy lives in `$XDG_CONFIG_HOME/vaultctl/policy.json`; `PolicyReading` says which policy a caller gets
/// and what a file with a problem gives it.
///
/// Rules of the document (see `parse`):
/// - `version` is required and must be the number 1.
/// - Every other section, and every field in a section, is optional: what is left out keeps its value
///   from `builtIn`, field by field (`{"version": 1, "rateLimit": {"failures": 5}}` changes only
///   `failures`). Left out means absent; `null` is a wrong type, not "use the default".
/// - An unknown version, an unknown key at any level, a duplicate key, a wrong type or a value out of range
///   rejects the whole document; nothing of it is used.
/// - `rateLimit.failures` is a whole number 1...100; `windowSeconds` and `blockSeconds` are whole numbers
///   of seconds 1...86400. A whole-valued decimal such as `3.0` counts as the whole number 3.
/// - `prompt.askpassSeconds` (how long a `VAULT_ASKPASS` program has to answer) is a whole number of
///   seconds 1...3600.
/// - `prompt.authenticationSeconds` (how long one whole authentication may take: the questions answered, a
///   finger put on the reader, a key touched) is a whole number of seconds 10...3600.
/// - `gate.storeOver` and `gate.delete` (true or false) say whether a `store` that replaces a value and a
///   `delete` need a fresh authentication (see `ChangeGates`); replacing a confirmed recovery code always does.
/// - `origin.remoteRanges` is a non-empty array of CIDR ranges (an empty one would let a tailnet's
///   addresses inside `fc00::/7` count as nearby); `origin.nearbyRanges` is an array of CIDR ranges and may
///   be empty (nothing is nearby). At most `maximumRangeCount` ranges each.
/// - The document is UTF-8 JSON of at most 64 KiB, nesting at most 32 levels.
///
/// A remote range wins over a nearby one (`fd7a:115c:a1e0::/48` lies inside `fc00::/7`), and an address in
/// neither counts as remote; that judgement belongs to the origin check, not to this type.
///
/// `Sendable`: values only.
public struct Policy: Sendable, Equatable {
    /// Peers in these ranges are remote, even when a nearby range also holds them.
    public var remoteRanges: [IPRange]
    /// Peers in these ranges (and in no remote range) are nearby.
    public var nearbyRanges: [IPRange]
    public var rateLimit: RateLimitPolicy
    /// Whether a slot with no setting of its own may be supplied to another program.
    public var allowSupplyByDefault: Bool
    /// How long a `VAULT_ASKPASS` program has to answer before it is stopped (`prompt.askpassSeconds`).
    public var askpassSeconds: Int
    /// How long one whole authentication may take before the command ends with 75
    /// (`prompt.authenticationSeconds`): long enough for a person to type, or to find the reader or the key.
    public var authenticationSeconds: Int
    /// Which destructive changes need a fresh authentication (`gate.storeOver`, `gate.delete`).
    public var gates: ChangeGates

    /// Every field given: no field has a default of its own, so `builtIn` is the one place the defaults are.
    public init(remoteRanges: [IPRange], nearbyRanges: [IPRange], rateLimit: RateLimitPolicy,
                allowSupplyByDefault: Bool, askpassSeconds: Int, authenticationSeconds: Int, gates: ChangeGates) {
        self.remoteRanges = remoteRanges
        self.nearbyRanges = nearbyRanges
        self.rateLimit = rateLimit
        self.allowSupplyByDefault = allowSupplyByDefault
        self.askpassSeconds = askpassSeconds
        self.authenticationSeconds = authenticationSeconds
        self.gates = gates
    }

    /// The only document version this vaultctl reads.
    public static let version = 1
    /// Largest policy document read, in bytes.
    public static let maximumDocumentSize = 64 * 1024
    /// Most ranges one list may hold.
    public static let maximumRangeCount = 256
    /// The file name of a user's policy inside the config folder.
    public static let fileName = "policy.json"

    /// The built-in defaults: the policy of a user who has no file, and what every field a document leaves
    /// out keeps. `policy/default.json` writes the same values out (a test holds them equal).
    public static let builtIn = Policy(
        remoteRanges: ["100.64.0.0/10", "fd7a:115c:a1e0::/48"].map(builtInRange),
        nearbyRanges: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                       "169.254.0.0/16", "fe80::/10", "fc00::/7"].map(builtInRange),
        rateLimit: RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300),
        allowSupplyByDefault: false,
        askpassSeconds: 120,
        authenticationSeconds: 180,
        gates: .all)

    /// A range written in this file; a typo here is a programming error, caught by the tests.
    private static func builtInRange(_ text: String) -> IPRange {
        guard let range = IPRange(text) else { preconditionFailure("built-in range \(text) does not parse") }
        return range
    }
}
