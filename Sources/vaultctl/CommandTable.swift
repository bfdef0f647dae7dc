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
        Command(name: "status", synopsis: "status SLOT [--json]",
                abstract: "Say where a secret is, as far as vaultctl can know. Never prompts.",
                discussion: """
                States: in-slot (an item in the Secret Service; whether it reaches other devices depends on the \
                provider and is never confirmed), cannot-leave-device (sealed to this machine), unknown (the \
                device slot is empty and the Secret Service could not be asked), none (both asked, both empty). \
                Exit 0 whenever it answered.
                """,
                positionals: 1...1, options: [.flag("json", "print JSON")], run: StatusCommand.run),
        Command(name: "move", synopsis: "move SLOT --to device|sync",
                abstract: "Move a secret to the other slot (after PAM), verifying before the old copy goes.",
                discussion: """
                Writes the target slot, reads it back and compares, updates the record, then deletes the \
                source. Interrupted at any point, the secret stays readable.
                """,
                positionals: 1...1,
                options: [.value("to", "MODE", choices: ["device", "sync"], "the slot to move it to")],
                run: MoveCommand.run),
        Command(name: "recovery generate", synopsis: "recovery generate [--mode device|sync]",
                abstract: "Store a new random recovery code in slot 'recovery-code' (not shown).",
                discussion: """
                160 random bits as 32 letters in groups of four, replacing any old code. Show it with \
                'vaultctl recovery show', write it down, then run 'vaultctl recovery confirm-copied'.
                """,
                positionals: 0...0, options: [modeOption], run: RecoveryCommand.generate),
        Command(name: "recovery show", synopsis: "recovery show",
                abstract: "Print the recovery code after a fresh PAM authentication.",
                discussion: "",
                positionals: 0...0, options: [], run: RecoveryCommand.show),
        Command(name: "recovery status", synopsis: "recovery status [--json]",
                abstract: "Where the recovery code is, and whether you marked this code as copied.",
                discussion: """
                The copied mark counts only for the code it was made for: a new code clears it. 'copied' is \
                null when the code could not be checked (the keyring is locked or unreachable).
                """,
                positionals: 0...0, options: [.flag("json", "print JSON")], run: RecoveryCommand.status),
        Command(name: "recovery confirm-copied", synopsis: "recovery confirm-copied",
                abstract: "Mark the current recovery code as written down.",
                discussion: "",
                positionals: 0...0, options: [], run: RecoveryCommand.confirmCopied),
        Command(name: "help", synopsis: "help [COMMAND]",
                abstract: "Show help for vaultctl or one command.",
                discussion: "",
                positionals: 0...2, options: [], run: HelpCommand.run),
    ]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }

    /// The command the first words name (two-word commands such as `recovery show` first), and how many
    /// words its name took.
    static func match(_ words: [String]) -> (Command, Int)? {
        if words.count >= 2, let c = named("\(words[0]) \(words[1])") { return (c, 2) }
        if let first = words.first, let c = named(first) { return (c, 1) }
        return nil
    }

    /// Whether `word` starts a group of commands (`recovery`).
    static func isGroup(_ word: String) -> Bool { all.contains { $0.name.hasPrefix("\(word) ") } }
}
