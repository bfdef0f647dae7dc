/// What this user allows: which networks count as remote or nearby, how failures are rate-limited, and the
/// defaults for new slots. Read from a versioned JSON document.
///
/// The default ships as `policy/default.json` and is compiled in as `defaultDocument`; a user's own copy
/// lives in `$XDG_CONFIG_HOME/vaultctl/policy.json`. Version 1:
///
/// ```json
/// {
///   "version": 1,
///   "origin": {
///     "remoteRanges": ["100.64.0.0/10", "fd7a:115c:a1e0::/48"],
///     "nearbyRanges": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
///                      "169.254.0.0/16", "fe80::/10", "fc00::/7"]
///   },
///   "rateLimit": { "failures": 3, "windowSeconds": 300, "blockSeconds": 300 },
///   "slotDefaults": { "allowSupply": false },
///   "prompt": { "askpassSeconds": 120, "authenticationSeconds": 180 },
///   "gate": { "storeOver": true, "delete": true }
/// }
/// ```
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
    public var askpassSeconds = 120
    /// How long one whole authentication may take before the command ends with 75
    /// (`prompt.authenticationSeconds`): long enough for a person to type, or to find the reader or the key.
    public var authenticationSeconds = 180
    /// Which destructive changes need a fresh authentication (`gate.storeOver`, `gate.delete`).
    public var gates = ChangeGates.all

    public init(remoteRanges: [IPRange], nearbyRanges: [IPRange], rateLimit: RateLimitPolicy,
                allowSupplyByDefault: Bool) {
        self.remoteRanges = remoteRanges
        self.nearbyRanges = nearbyRanges
        self.rateLimit = rateLimit
        self.allowSupplyByDefault = allowSupplyByDefault
    }

    /// The only document version this vaultctl reads.
    public static let version = 1
    /// Largest policy document read, in bytes.
    public static let maximumDocumentSize = 64 * 1024
    /// Most ranges one list may hold.
    public static let maximumRangeCount = 256
    /// The file name of a user's policy inside the config folder.
    public static let fileName = "policy.json"

    /// The built-in default, identical to policy/default.json (a test checks they parse equal).
    public static let builtIn = Policy(
        remoteRanges: ["100.64.0.0/10", "fd7a:115c:a1e0::/48"].map(builtInRange),
        nearbyRanges: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                       "169.254.0.0/16", "fe80::/10", "fc00::/7"].map(builtInRange),
        rateLimit: RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300),
        allowSupplyByDefault: false)

    /// The default document text compiled into the binary (the same text as policy/default.json).
    public static let defaultDocument = """
        {
          "version": 1,
          "origin": {
            "remoteRanges": ["100.64.0.0/10", "fd7a:115c:a1e0::/48"],
            "nearbyRanges": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "fe80::/10", "fc00::/7"]
          },
          "rateLimit": { "failures": 3, "windowSeconds": 300, "blockSeconds": 300 },
          "slotDefaults": { "allowSupply": false },
          "prompt": { "askpassSeconds": 120, "authenticationSeconds": 180 },
          "gate": { "storeOver": true, "delete": true }
        }

        """

    /// A range written in this file; a typo here is a programming error, caught by the tests.
    private static func builtInRange(_ text: String) -> IPRange {
        guard let range = IPRange(text) else { preconditionFailure("built-in range \(text) does not parse") }
        return range
    }
}
