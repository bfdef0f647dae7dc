/// One command: the data the parser, the help screens and the dispatcher all read.
struct Command: Sendable {
    let name: String
    /// Usage line after `vaultctl `.
    let synopsis: String
    let abstract: String
    /// Longer help: what it does, in a few lines.
    let discussion: String
    let positionals: ClosedRange<Int>
    let options: [OptionSpec]
    let run: @Sendable (ParsedArguments, Context) throws(CommandFailure) -> Void
}

/// Every command vaultctl has, in the order help lists them.
enum CommandTable {
    static let modeOption = OptionSpec.value("mode", "MODE", choices: ["device", "sync"],
        "where to keep it: device (sealed file bound to this machine, the default) or sync (Secret Service item)")

    static let all: [Command] = [
        Command(name: "store", synopsis: "store SLOT [--mode device|sync]",
                abstract: "Store a secret in a slot, replacing any old value.",
                discussion: """
                The secret is read from standard input when it is not a terminal (the exact bytes, nothing \
                trimmed), otherwise asked twice with echo off. It is never taken from arguments. After the new \
                value is written and recorded, any copy in the other slot is removed.
                """,
                positionals: 1...1, options: [modeOption], run: StoreCommand.run),
        Command(name: "read", synopsis: "read SLOT",
                abstract: "Print a secret after a fresh PAM authentication.",
                discussion: """
                Every read authenticates you again through PAM (service 'vaultctl'). The password comes from \
                the program in VAULT_ASKPASS, or from the terminal. The exact bytes are written to standard \
                output, with a newline added only when it is a terminal.
                """,
                positionals: 1...1, options: [], run: ReadCommand.run),
        Command(name: "delete", synopsis: "delete SLOT",
                abstract: "Remove a secret from both slots.",
                discussion: "Removes the value from the device slot and the Secret Service, and its record.",
                positionals: 1...1, options: [], run: DeleteCommand.run),
        Command(name: "list", synopsis: "list [--json]",
                abstract: "List slot names and where each is kept (never the secrets).",
                discussion: "One line per slot and mode. With --json, a document for programs.",
                positionals: 0...0, options: [.flag("json", "print JSON")], run: ListCommand.run),
        Command(name: "help", synopsis: "help [COMMAND]",
                abstract: "Show help for vaultctl or one command.",
                discussion: "",
                positionals: 0...1, options: [], run: HelpCommand.run),
    ]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }
}
