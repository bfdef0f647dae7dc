import Vault

/// `vaultctl delete SLOT`: remove from both slots and the record.
enum DeleteCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        do {
            if let warning = try vault.delete(name).warning { Output.err("vaultctl: warning: \(warning).\n") }
        } catch {
            throw ErrorReport.failure(error)
        }
        // The permission and last supply go with the value (a new value must be allowed again).
        try? SupplyState(stateFolder: context.locations.state, allowByDefault: false).forget(name)
    }
}
