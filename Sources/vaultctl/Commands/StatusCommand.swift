import Slots
import Vault

/// `vaultctl status SLOT [--json]`: where a secret is, as far as can be known. Never prompts.
enum StatusCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        let status: LocationStatus
        do { status = try vault.status(name) } catch { throw ErrorReport.failure(error) }
        Output.out(args.has("json") ? "\(json(status))\n" : "\(status.state.rawValue): \(status.message)\n")
    }

    /// The status object; `extra` adds fields (for the recovery code's `copied`).
    static func json(_ s: LocationStatus, extra: [(String, String)] = []) -> String {
        var fields = [
            ("slot", JSON.string(s.slot.rawValue)),
            ("state", JSON.string(s.state.rawValue)),
            ("mode", s.mode.map { JSON.string($0.rawValue) } ?? "null"),
            ("message", JSON.string(s.message)),
        ]
        fields += extra
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
