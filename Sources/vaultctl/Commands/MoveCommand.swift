import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl move SLOT --to device|sync`.
enum MoveCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        guard let raw = args.options["to"], let target = SlotMode(rawValue: raw) else {
            throw .usage("'move' needs --to device or --to sync.")
        }
        let vault = try context.vault()
        do throws(VaultError) {
            let outcome: Vault.MoveOutcome
            do throws(VaultError) { outcome = try vault.move(name, to: target) } catch {
                // The slot changed while this looked and asked (or asked nothing): look and ask again, once.
                guard case .changedMeanwhile = error else { throw error }
                outcome = try vault.move(name, to: target)
            }
            switch outcome {
            case .alreadyThere(let removedCopy, let differed):
                let said: String
                switch (removedCopy, differed) {
                case (false, _): said = "nothing moved"
                case (true, true?): said = "removed the copy left in the other slot, which held another value"
                case (true, false?): said = "removed the leftover copy from the other slot (the same value)"
                case (true, nil): said = "removed the copy left in the other slot (not compared: the policy lets deletes go without a password)"
                }
                Output.err("vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; \(said).\n")
            case .moved:
                break
            }
        } catch {
            throw ErrorReport.failure(error, notHeldHere: vault)
        }
    }
}
