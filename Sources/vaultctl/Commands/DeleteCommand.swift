import Vault

/// `vaultctl delete SLOT`: remove from both slots and the record.
enum DeleteCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        // The permission and last supply go with the value, and go first: a delete killed halfway must not
        // leave a permission that a later, new value would inherit without ever being allowed.
        do { try SupplyState(stateFolder: context.locations.state, allowByDefault: false).forget(name) } catch {
            throw ErrorReport.failure(error)
        }
        do {
            if let warning = try vault.delete(name).warning { Output.err("vaultctl: warning: \(warning).\n") }
        } catch {
            throw ErrorReport.failure(error)
        }
    }
}
