#if canImport(Glibc)
import Glibc
#endif
import CStartHardening
import GateProtocol
import Vault
import VaultRules

/// The installed vaultctl-gate started from the raw words of the command line by a constructor
/// (Sources/CStartHardening/early_gate.c), once vaultctl is not dumpable, before main (and, in the release
/// build, before the statically linked Swift runtime's start-up): the gate's start-up is most of a
/// protected command's time, and vaultctl's own start (the runtime, the decoding and parsing of the words,
/// the command's context) then runs while it loads. The command is named
/// by the first one or two words, as `CommandTable` names it; nothing starts for `--help`, `-h` or
/// `--version`, for a command that does not look at the vault, or under git's helper name. The parsed
/// command takes the process (`Context.startGateEarly`); a usage error found later leaves it to end at once
/// (its input closes when vaultctl exits), before any request.
enum EarlyGate {
    /// What the constructor started, if it started the gate; taken once.
    static func launch() -> GateClient.Launched? {
        let taken = vaultctl_take_early_gate()
        guard let path = taken.path else { return nil }
        return GateClient.launched(path: String(cString: path), taken.start)
    }

    /// The command `argv` (the program's name first) names, when the gate is started for it ahead: the
    /// constructor's own decision.
    static func command(_ argv: [String]) -> CommandKind? { decision(argv)?.kind }

    /// Whether the constructor gives the gate the `--authenticating` hint for the command `argv` names.
    static func hintsAuthentication(_ argv: [String]) -> Bool { decision(argv)?.authenticates ?? false }

    private static func decision(_ argv: [String]) -> (kind: CommandKind, authenticates: Bool)? {
        var words: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        defer { words.forEach { free($0) } }
        var authenticates: Int32 = 0
        guard let name = vaultctl_early_gate_command(Int32(words.count), &words, &authenticates),
              let kind = CommandKind(rawValue: String(cString: name)) else { return nil }
        return (kind, authenticates == 1)
    }
}
