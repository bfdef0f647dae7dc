#if canImport(Glibc)
import Glibc
#endif
import Vault

/// Starts the installed vaultctl-gate from the raw words of the command line, before they are decoded and
/// parsed: the gate's start-up is most of a protected command's time, and the decoding, the parsing and the
/// command's context (a few hundred microseconds of first use of the Swift runtime) then run while it
/// loads. The command is named by the first one or two words, as `CommandTable` names it; nothing starts
/// for `--help`, `-h` or `--version`, for a command that does not look at the vault, or under git's helper
/// name. The parsed command takes the process (`Context.startGateEarly`); a usage error found later leaves
/// it to end at once (its input closes when vaultctl exits), before any request.
enum EarlyGate {
    static func launch() -> GateClient.Launched? {
        let count = Int(CommandLine.argc)
        // Only the words the decision reads: the program's name, and words up to a help option or `--`.
        var words: [String] = []
        for i in 0..<count {
            guard let word = CommandLine.unsafeArgv[i].map({ String(cString: $0) }) else { break }
            words.append(word)
            if word == "--" { break }
        }
        guard let kind = command(words) else { return nil }
        return GateClient.launchInstalled(authenticating: kind.authenticatesAsARule)
    }

    /// The command `argv` (the program's name first) names, when the gate should start for it ahead.
    static func command(_ argv: [String]) -> CommandKind? {
        guard argv.count >= 2, argv[0].split(separator: "/").last.map(String.init) != GitHelperEntry.programName else { return nil }
        for word in argv.dropFirst() {
            if word == "--" { break }
            if word == "--help" || word == "-h" || word == "--version" { return nil }
        }
        let first = argv[1]
        let kind = argv.count > 2 ? CommandKind(rawValue: "\(first) \(argv[2])") ?? CommandKind(rawValue: first) : CommandKind(rawValue: first)
        guard let kind, kind.looksAtVault else { return nil }
        return kind
    }
}
