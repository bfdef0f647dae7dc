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
            Output.err("vaultctl: the vault is locked, and so is the Secret Service's default collection.\n")
        } catch {
            Output.err("vaultctl: the vault is locked; the Secret Service collection was not locked: \(SlotErrorText.describe(error))\n")
        }
    }

    static func unlock(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let origin = try context.origin()
        guard origin.verdict == .nearby else {
            throw ErrorReport.failure(VaultError.refused("unlocking needs a session on this machine or the local network, and this one is remote (\(origin.description))"))
        }
        let vault = try context.vault()
        do {
            try vault.gate.verify(reason: "unlock the vault")
            try context.vaultLock.unlock()
        } catch {
            throw ErrorReport.failure(error)
        }
    }
}
