import SecretService
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl lock` (no password, from anywhere) and `vaultctl unlock` (nearby origin, then PAM).
enum LockCommand {
    static func lock(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let origin = (try? context.origin().description) ?? "unknown origin"
        // A protected vault's lock is the gate's marker, which no program running as you can remove.
        let client = try context.gateClient()
        do throws(VaultError) {
            if let client { _ = try client.request(.lock) } else { try context.vaultLock.lock(time: context.clock.now(), origin: origin) }
        } catch {
            throw ErrorReport.failure(error)
        }
        // Which collection this locks is written down before it is locked (the intent first): a lock killed
        // right after the keyring locked still leaves 'vaultctl unlock' what to undo.
        var recorded = false
        do {
            let locked = try SecretServiceSlot().lockDefaultCollection(beforeLocking: { collection in
                recorded = (try? context.keyringLockRecord.save(collection)) != nil
            })
            if let collection = locked {
                if recorded {
                    Output.message("the vault is locked, and so is the Secret Service collection '\(collection.label)'; 'vaultctl unlock' unlocks both (the keyring will ask for its own password).")
                } else {
                    Output.message("the vault is locked, and so is the Secret Service collection '\(collection.label)'; 'vaultctl unlock' could not be told to unlock it (the state folder is not writable), so unlock it yourself.")
                }
            } else {
                Output.message("the vault is locked; the Secret Service's default collection was locked already, and 'vaultctl unlock' leaves it as it is.")
            }
        } catch {
            // The record (if written) stays: the provider may have locked it before the call failed (one that
            // crashed mid-call comes back locked), and unlocking a collection that is not locked changes nothing.
            Output.message("the vault is locked; the Secret Service collection was not locked: \(SlotErrorText.describe(error))")
        }
    }

    static func unlock(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let origin = try context.origin()
        guard origin.verdict == .nearby else {
            throw ErrorReport.failure(VaultError.refused("unlocking needs a session on this machine or the local network, and this one is remote (\(origin.description))"))
        }
        let vault = try context.vault()
        let client = try context.gateClient()
        do throws(VaultError) {
            if let client {
                // The gate asks (PAM, rate limit) and removes its own marker.
                _ = try client.request(.unlock)
            } else {
                // A marker that could not be removed afterwards (not a regular file) is refused before the prompt.
                _ = try context.vaultLock.isLocked()
                try vault.gate.verify(reason: PromptReason.unlockVault.text)
                try context.vaultLock.unlock()
            }
        } catch {
            throw ErrorReport.failure(error)
        }
        // Undo what `lock` did to the keyring, and only that.
        guard let collection = try? context.keyringLockRecord.load() else { return }
        do {
            try SecretServiceSlot().unlock(collection)
            try? context.keyringLockRecord.clear()
            Output.message("the vault is unlocked, and so is the Secret Service collection '\(collection.label)'.")
        } catch {
            Output.message("the vault is unlocked; the Secret Service collection '\(collection.label)' that 'vaultctl lock' locked is still locked: \(SlotErrorText.describe(error)) Unlock it from your desktop or in the provider ('vaultctl unlock' tries again), or, \(KeyringUnlockAdvice.lead) \(KeyringUnlockAdvice.here)")
        }
    }
}
