import Slots
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
                Output.err(!removedCopy
                    ? "vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; nothing moved.\n"
                    : differed
                    ? "vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; removed the copy left in the other slot, which held another value.\n"
                    : "vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; removed the leftover copy from the other slot.\n")
            case .moved:
                break
            }
        } catch {
            throw ErrorReport.failure(error)
        }
    }
}
