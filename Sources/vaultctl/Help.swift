/// Help screens, generated from the command table.
enum Help {
    static let version = "vaultctl 0.1.0"

    static var overview: String {
        var s = """
        vaultctl — keep small secrets in access-controlled slots; every read needs a fresh PAM authentication.

        Usage: vaultctl COMMAND [OPTIONS] [ARGS]

        Commands:

        """
        let width = CommandTable.all.map { $0.name.count }.max() ?? 0
        for c in CommandTable.all {
            s += "  \(pad(c.name, width))  \(c.abstract)\n"
        }
        s += """

        Options:
          --help     show help (also: vaultctl help COMMAND, vaultctl COMMAND --help)
          --version  show the version

        Exit codes:

        """
        for code in ExitCode.allCases {
            s += "  \(pad(String(code.rawValue), 3))  \(code.meaning)\n"
        }
        s += """

        Environment:
          VAULT_ASKPASS    program that prints your password (called with the prompt as its argument)
          XDG_STATE_HOME   device slots live in $XDG_STATE_HOME/vaultctl (default ~/.local/state/vaultctl)
          XDG_CONFIG_HOME  the mode record lives in $XDG_CONFIG_HOME/vaultctl (default ~/.config/vaultctl)

        """
        return s
    }

    /// The commands of a group (`vaultctl recovery`).
    static func group(_ word: String) -> String {
        let members = CommandTable.all.filter { $0.name.hasPrefix("\(word) ") }
        let width = members.map { $0.synopsis.count }.max() ?? 0
        var s = "Usage: vaultctl \(word) SUBCOMMAND\n\n"
        for c in members { s += "  \(pad(c.synopsis, width))  \(c.abstract)\n" }
        return s
    }

    static func screen(for c: Command) -> String {
        var s = "Usage: vaultctl \(c.synopsis)\n\n\(c.abstract)\n"
        if !c.discussion.isEmpty { s += "\n\(c.discussion)\n" }
        if !c.options.isEmpty {
            s += "\nOptions:\n"
            let labels = c.options.map { o in o.value.map { "--\(o.name) \($0)" } ?? "--\(o.name)" }
            let width = labels.map(\.count).max() ?? 0
            for (o, label) in zip(c.options, labels) {
                s += "  \(pad(label, width))  \(o.help)\n"
            }
        }
        return s
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(0, width - s.count))
    }
}
