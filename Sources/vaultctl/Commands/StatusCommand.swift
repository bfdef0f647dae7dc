import Slots
import Vault

/// `vaultctl status SLOT [--json]`: where a secret is, as far as can be known. Never prompts.
enum StatusCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let vault = try context.vault()
        var status: LocationStatus
        do { status = try vault.status(name) } catch { throw ErrorReport.failure(error) }
        // Which boundary guards a device-slot value: the gate, or none (and why an installed gate is not in effect).
        let protection = try context.protection()
        if status.mode == .device {
            status.message += " " + protection.sentence
        }
        // Supply facts are shown only when the slot was ever allowed or supplied.
        // Supply facts need the policy (for the default); a malformed policy must not stop status.
        let supply = try? context.supplyState()
        let allowed = (try? supply?.isAllowed(name)) ?? false
        let last = try? supply?.lastSupply(name)
        if args.has("json") {
            let lastJSON = last.flatMap { $0 }.flatMap { $0 }.map {
                "{\"time\":\(JSON.string(TimeText.iso8601($0.time))),\"origin\":\(JSON.string($0.origin)),\"accepted\":\($0.rejected ? "false" : "null")}"
            } ?? "null"
            // What the PAM stack a read goes through names (as its file says): a password, a finger, a key.
            let pam = PAMStack.read()?.json ?? "null"
            let extra = [("allowSupply", allowed ? "true" : "false"), ("lastSupply", lastJSON), ("boundary", JSON.string(protection.word)),
                         ("pam", pam)]
            Output.out("\(json(status, extra: extra))\n")
        } else {
            var line = "\(status.state.rawValue): \(status.message)"
            if allowed { line += " It may be supplied to other programs." }
            if let l = last.flatMap({ $0 }).flatMap({ $0 }) {
                line += l.rejected
                    ? " Last supplied \(TimeText.iso8601(l.time)) (\(l.origin)), and not accepted: the program came back for it, which counted as a failed attempt."
                    : " Last supplied \(TimeText.iso8601(l.time)) (\(l.origin))."
            }
            Output.out(line + "\n")
        }
    }

    /// The status object; `extra` adds fields (for the recovery code's `copied`).
    static func json(_ s: LocationStatus, extra: [(String, String)] = []) -> String {
        var fields = [
            ("slot", JSON.string(s.slot.rawValue)),
            ("state", JSON.string(s.state.rawValue)),
            ("mode", s.mode.map { JSON.string($0.rawValue) } ?? "null"),
            ("message", JSON.string(s.message)),
            ("binding", s.binding.map { JSON.string($0) } ?? "null"),
        ]
        fields += extra
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
