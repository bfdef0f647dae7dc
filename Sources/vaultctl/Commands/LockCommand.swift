import Slots
import Vault

/// `vaultctl lock` (no password, from anywhere) and `vaultctl unlock` (nearby origin, then PAM).
enum LockCommand {
    static func lock(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let origin = (try? context.origin().description) ?? "unknown origin"
        do { try context.vaultLock.lock(time: context.clock.now(), origin: origin) } catch {
            throw ErrorReport.failure(error)
        }
        do {
            try SecretServiceSlot().lockDefaultCollection()
            Output.message("the vault is locked, and so is the Secret Service's default collection.")
        } catch {
            Output.message("the vault is locked; the Secret Service collection was not locked: \(SlotErrorText.describe(error))")
        }
    }

    static func unlock(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let origin = try context.origin()
        guard origin.verdict == .nearby else {
            throw ErrorReport.failure(VaultError.refused("unlocking needs a session on this machine or the local network, and this one is remote (\(origin.description))"))
        }
        let vault = try context.vault()
        do {
            // A marker that could not be removed afterwards (not a regular file) is refused before the prompt.
            _ = try context.vaultLock.isLocked()
            try vault.gate.verify(reason: "unlock the vault")
            try context.vaultLock.unlock()
        } catch {
            throw ErrorReport.failure(error)
        }
    }
}
