import Slots

/// Names kept for vaultctl's own values (issue 35: the fleet's machine key, its status token, its pinned
/// configuration, offline copies), which live in the slots beside a person's. A command that changes or
/// hands out a slot refuses them, so no value of a person's takes such a name and none of vaultctl's own is
/// replaced, moved, deleted or supplied by a command meant for a person's values; `list` does not show them.
/// A value that already has such a name stays readable.
extension SlotName {
    /// What every reserved name begins with.
    public static let reservedPrefix = "vaultctl."

    /// The rule, in words for a usage error.
    public static let reservedRule = "names beginning with '\(reservedPrefix)' are kept for vaultctl's own values"

    /// Whether the name is kept for vaultctl's own values.
    public var isReserved: Bool { rawValue.hasPrefix(Self.reservedPrefix) }
}
