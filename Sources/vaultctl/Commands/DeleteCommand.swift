import GateProtocol
import Vault
import VaultRules

/// `vaultctl delete SLOT`: after PAM, remove from both slots and the record.
enum DeleteCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        // Said when nothing is here and the record named the sync slot: that entry goes (after PAM, when deletes
        // are gated), a copy in another keyring stays. Exit 66 as for any "nothing was deleted": a script that
        // asked for a value to go learns that no value was here; the entry named none this process sees.
        let elsewhere = vault.notInRunningService(ifRecorded: name)
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
            if case .slot(.empty) = error, let elsewhere {
                throw CommandFailure(code: .noInput, message: "\(elsewhere) Nothing was deleted here; the record of '\(name)' in the sync slot is removed; a copy in another keyring, if any, stays there.")
            }
            if case .slot(.empty) = error {
                throw CommandFailure(code: .noInput, message: "Slot '\(name)' holds no value; nothing was deleted.")
            }
            throw ErrorReport.failure(error)
        }
    }
}
