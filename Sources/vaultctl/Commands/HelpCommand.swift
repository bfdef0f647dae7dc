/// `vaultctl help [COMMAND]`.
enum HelpCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        guard let topic = args.positionals.first else {
            Output.out(Help.overview)
            return
        }
        guard let command = CommandTable.named(topic) else {
            throw .usage("Unknown command '\(topic)'.")
        }
        Output.out(Help.screen(for: command))
    }
}
