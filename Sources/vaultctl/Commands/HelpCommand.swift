import Slots
/// `vaultctl help [COMMAND]`.
enum HelpCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        guard let topic = args.positionals.first else {
            Output.out(Help.overview)
            return
        }
        guard let command = CommandTable.named(args.positionals.joined(separator: " ")) else {
            if CommandTable.isGroup(topic) && args.positionals.count == 1 {
                Output.out(Help.group(topic))
                return
            }
            throw .usage("Unknown command \(Quote.text(args.positionals.joined(separator: " "))).")
        }
        Output.out(Help.screen(for: command))
    }
}
