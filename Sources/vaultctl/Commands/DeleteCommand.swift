import Vault

/// `vaultctl delete SLOT`: after PAM, remove from both slots and the record.
enum DeleteCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        // PAM before anything is forgotten (gate.delete): a wrong password leaves the value and its permission.
        var wasEmpty: Bool
        do { wasEmpty = try vault.confirmDelete(name) } catch { throw ErrorReport.failure(error) }
        // The permission and last supply go with the value: forgotten first (a delete killed halfway must
        // not leave a permission that a later, new value would inherit), put back if the delete failed
        // while the value may still be there.
        let permissions = SupplyState(stateFolder: context.locations.state, allowByDefault: false)
        do throws(VaultError) {
            let outcome = try permissions.forgetting(name, during: { () throws(VaultError) -> Vault.StoreOutcome in
                do throws(VaultError) { return try vault.delete(name, expectingEmpty: wasEmpty) } catch {
                    // A value stored since it looked (and found nothing, so it asked nothing): deleting it is
                    // a delete of a value, asked for as one.
                    guard case .changedMeanwhile = error else { throw error }
                    wasEmpty = try vault.confirmDelete(name)
                    return try vault.delete(name, expectingEmpty: wasEmpty)
                }
            }, stillHeld: { (try? vault.loadMode(name)) != LoadMode.none })
            if let warning = outcome.warning { Output.message("warning: \(warning).") }
        } catch {
            // Nothing to delete is not an invitation to store something.
            if case .slot(.empty) = error {
                throw CommandFailure(code: .noInput, message: "Slot '\(name)' holds no value; nothing was deleted.")
            }
            throw ErrorReport.failure(error)
        }
    }
}
