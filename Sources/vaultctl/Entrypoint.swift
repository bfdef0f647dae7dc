/// Dispatches the words after `vaultctl` to a command and turns any failure into one stderr line.
enum Entrypoint {
    static func run(_ words: [String]) -> ExitCode {
        do {
            try dispatch(words)
            return .ok
        } catch {
            Output.err("vaultctl: \(error.message)\n")
            return error.code
        }
    }

    static func dispatch(_ words: [String]) throws(CommandFailure) {
        guard let first = words.first else {
            Output.err(Help.overview)
            throw .usage("No command given.")
        }
        switch first {
        case "--help", "-h":
            Output.out(Help.overview)
            return
        case "--version":
            Output.out("\(Help.version)\n")
            return
        default:
            break
        }
        guard let (command, used) = CommandTable.match(words) else {
            if CommandTable.isGroup(first) {
                if words.count == 1 || words[1] == "--help" || words[1] == "-h" {
                    Output.out(Help.group(first))
                    if words.count == 1 { throw .usage("'\(first)' needs a subcommand.") }
                    return
                }
                throw .usage("Unknown command '\(first) \(words[1])'.")
            }
            throw .usage("Unknown command '\(first)'.")
        }
        let rest = Array(words.dropFirst(used))
        if let dash = rest.firstIndex(of: "--"), rest[..<dash].contains("--help") || rest[..<dash].contains("-h") {
            Output.out(Help.screen(for: command))
            return
        } else if !rest.contains("--"), rest.contains("--help") || rest.contains("-h") {
            Output.out(Help.screen(for: command))
            return
        }
        let parsed = try ArgumentParser.parse(rest, for: command)
        try command.run(parsed, Context())
    }
}
