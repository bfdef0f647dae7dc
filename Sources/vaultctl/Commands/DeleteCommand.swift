import Vault

/// `vaultctl delete SLOT`: remove from both slots and the record.
enum DeleteCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        do { try vault.delete(name) } catch { throw ErrorReport.failure(error) }
        // The permission and last supply go with the value (a new value must be allowed again).
        do { try context.supplyState().forget(name) } catch { throw ErrorReport.unexpected(error) }
    }
}
