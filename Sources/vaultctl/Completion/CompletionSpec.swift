/// What the shell completions offer for one command, read from its entry in the command table: its name
/// words, its options, and the kind of each argument its synopsis names.
///
/// The synopsis is the one source: `SLOT` is a slot name, `on|off` a fixed choice, `FILE` a file,
/// `COMMAND` a vaultctl command (or, after `--`, a program to run); anything else is free text. So a new
/// command, option or choice shows up in help, the manual page and every completion at once.
struct CompletionSpec {
    enum Argument: Equatable {
        case slot
        case choices([String])
        case file
        case command
        case program
        case free
    }

    let words: [String]
    /// The command's options, then `--help`.
    let options: [OptionSpec]
    /// The arguments before `--`.
    let arguments: [Argument]
    /// The first argument after `--`, when the command takes one (`supply`: the program to run).
    let afterDashDash: Argument?
    let abstract: String

    var name: String { words.joined(separator: " ") }

    static let helpOption = OptionSpec.flag("help", "show help for this command")

    init(_ command: Command) {
        words = command.name.split(separator: " ").map(String.init)
        options = command.options + [Self.helpOption]
        abstract = command.abstract
        var arguments: [Argument] = []
        var after: Argument?
        var dashDash = false
        let tokens = command.synopsis.split(separator: " ").dropFirst(words.count)
            .map { $0.filter { $0 != "[" && $0 != "]" } }
        var skipValue = false
        for token in tokens {
            if skipValue { skipValue = false; continue }
            if token == "--" { dashDash = true; continue }
            if token.hasPrefix("--") {
                skipValue = command.options.first { "--\($0.name)" == token }?.value != nil
                continue
            }
            let kind: Argument
            switch token {
            case "SLOT": kind = .slot
            case "FILE": kind = .file
            case "COMMAND": kind = dashDash ? .program : .command
            case _ where token.contains("|"): kind = .choices(token.split(separator: "|").map(String.init))
            default: kind = .free
            }
            if dashDash {
                if after == nil { after = kind }
            } else {
                arguments.append(kind)
            }
        }
        self.arguments = arguments
        afterDashDash = after
    }

    static var all: [CompletionSpec] { CommandTable.all.map(CompletionSpec.init) }

    /// The words a command line can start with, in table order: single commands and group names.
    static var firstWords: [String] {
        var seen: [String] = []
        for c in all where !seen.contains(c.words[0]) { seen.append(c.words[0]) }
        return seen
    }

    /// What `vaultctl help` says about a first word (a command's abstract, or the group's members).
    static func abstract(ofFirstWord word: String) -> String {
        let members = all.filter { $0.words[0] == word }
        if members.count == 1 && members[0].words.count == 1 { return members[0].abstract }
        return "\(word) commands: " + members.map { $0.words.dropFirst().joined(separator: " ") }.joined(separator: ", ")
    }

    static let globalOptions: [OptionSpec] = [
        .flag("help", Help.helpOption), .flag("version", "show the version"),
    ]
}
