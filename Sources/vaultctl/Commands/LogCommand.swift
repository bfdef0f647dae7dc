import Slots
import Vault

/// `vaultctl log [--json] [--limit N]`.
enum LogCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        var limit = 50
        if let raw = args.options["limit"] {
            guard let n = Int(raw), n > 0, n <= 100_000 else {
                throw .usage("'--limit' takes a whole number from 1 to 100000, not \(Quote.text(raw)).")
            }
            limit = n
        }
        // A protected vault's log is the gate's, which no program running as you can rewrite.
        let client = try context.gateClient()
        let entries: [AuditEntry]
        do throws(VaultError) {
            if let client {
                let reply = try client.request(.log(limit))
                entries = reply.withUnsafeBytes { AuditLog.parse($0) }
            } else {
                entries = try context.audit.entries(limit: limit)
            }
        } catch { throw ErrorReport.failure(error) }
        for e in entries {
            if args.has("json") {
                let fields: [(String, String)] = [
                    ("time", JSON.string(e.time)), ("command", JSON.string(e.command)),
                    ("slot", e.slot.map(JSON.string) ?? "null"), ("origin", JSON.string(e.origin)),
                    ("result", JSON.string(e.result)), ("reason", e.reason.map(JSON.string) ?? "null"),
                ]
                Output.out("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n")
            } else {
                var line = "\(e.time)  \(e.result.padding(7))  \(e.command)"
                if let slot = e.slot { line += " \(slot)" }
                line += "  (\(e.origin))"
                if let reason = e.reason { line += "  \(reason)" }
                Output.out(line + "\n")
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
