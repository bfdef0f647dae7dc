import Slots
import Vault

/// `vaultctl read SLOT`: the gated read.
enum ReadCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        let secret: SecretBytes
        do { secret = try vault.read(name) } catch { throw ErrorReport.failure(error) }
        // The audit line goes out before the secret does: one that cannot be written stops it.
        try context.recordDisclosure("ok")
        guard Output.secret(secret) else {
            throw CommandFailure(code: .failure, message: "Failed to write the secret to standard output.")
        }
    }
}
