import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl read SLOT`: the gated read, to standard output or (`--clip`) to the clipboard.
enum ReadCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        // The clipboard is checked before the prompt: no password is asked for a secret that cannot go anywhere.
        let clip = try ClipRequest.from(args)
        let vault = try context.vault()
        let secret: SecretBytes
        do { secret = try vault.read(name) } catch { throw ErrorReport.failure(error, notHeldHere: vault) }
        // The audit line goes out before the secret does: one that cannot be written stops it.
        try context.recordDisclosure("ok")
        if let clip {
            try clip.deliver(secret, slot: name)
            return
        }
        guard Output.secret(secret) else {
            throw CommandFailure(code: .failure, message: "Failed to write the secret to standard output.")
        }
    }
}
