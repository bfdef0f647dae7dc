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
        do {
            switch try vault.move(name, to: target) {
            case .alreadyThere(let removedCopy):
                Output.err(removedCopy
                    ? "vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; removed the leftover copy from the other slot.\n"
                    : "vaultctl: slot '\(name)' already is in the \(target.rawValue) slot; nothing moved.\n")
            case .moved:
                break
            }
        } catch {
            throw ErrorReport.failure(error)
        }
    }
}
