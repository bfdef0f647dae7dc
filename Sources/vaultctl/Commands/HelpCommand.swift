import Slots
/// `vaultctl help [COMMAND]`, and `vaultctl help --man`: the manual page.
enum HelpCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        if args.has("man") {
            guard args.positionals.isEmpty else { throw .usage("'help --man' writes the whole manual page; leave out '\(args.positionals.joined(separator: " "))'.") }
            Output.out(ManPage.roff)
            return
        }
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
