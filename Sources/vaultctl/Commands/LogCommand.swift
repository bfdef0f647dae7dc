import JSON
import GateProtocol
import Slots
import VaultRules
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
        // A protected vault has two logs: the gate's (which no program running as you can rewrite) and the
        // state folder's (commands that never reach the gate: the sync slot, supplies, refusals before it);
        // shown together in time order, each line marked with where it came from. The limit is each log's:
        // the state folder's lines are any program's of yours to write, so however many it writes, and
        // whatever time it stamps them with, the gate's newest lines are all shown.
        let client = try context.gateClient()
        var entries: [(entry: AuditEntry, source: String)]
        reading: do throws(VaultError) {
            guard let client else {
                entries = try context.audit.entries(limit: limit).map { (entry: $0, source: "user") }
                break reading
            }
            let gate = try gateEntries(client, limit: limit).map { (entry: $0, source: "gate") }
            var own: [(entry: AuditEntry, source: String)] = []
            do throws(VaultError) { own = try context.audit.entries(limit: limit).map { (entry: $0, source: "user") } } catch {
                Output.message("warning: your state folder's log is not shown: \(ErrorReport.failure(error).message)")
            }
            // A line stamped later than now was not written by vaultctl: not shown, and said.
            let now = TimeText.iso8601(context.clock.now() + 60)
            let future = own.filter { $0.entry.time > now }.count
            if future > 0 {
                own.removeAll { $0.entry.time > now }
                Output.message("warning: \(future) line\(future == 1 ? "" : "s") of your state folder's log \(future == 1 ? "is" : "are") stamped later than now; not shown (a program running as you can write that log).")
            }
            // Merged by time (UTC, one format, so text order is time order); at one second, the gate's first.
            entries = []
            var (i, j) = (0, 0)
            while i < gate.count || j < own.count {
                if j == own.count || (i < gate.count && gate[i].entry.time <= own[j].entry.time) {
                    entries.append(gate[i]); i += 1
                } else {
                    entries.append(own[j]); j += 1
                }
            }
        } catch { throw ErrorReport.failure(error) }
        let marked = client != nil
        for (e, source) in entries {
            if args.has("json") {
                let fields: [(String, String)] = [
                    ("time", JSON.string(e.time)), ("command", JSON.string(e.command)),
                    ("slot", e.slot.map(JSON.string) ?? "null"), ("origin", JSON.string(e.origin)),
                    ("result", JSON.string(e.result)), ("reason", e.reason.map(JSON.string) ?? "null"),
                    ("source", JSON.string(source)),
                ]
                Output.out("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n")
            } else {
                var line = "\(e.time)  \(marked ? "\(source.padding(4))  " : "")\(e.result.padding(7))  \(e.command)"
                if let slot = e.slot { line += " \(slot)" }
                line += "  (\(e.origin))"
                if let reason = e.reason { line += "  \(reason)" }
                Output.out(line + "\n")
            }
        }
    }

    /// The gate's newest `limit` lines, oldest first, in as many answers as they take (one answer holds 64 KiB).
    static func gateEntries(_ client: GateClient, limit: Int) throws(VaultError) -> [AuditEntry] {
        var out: [AuditEntry] = []
        while out.count < limit {
            let reply = try client.request(.log(limit - out.count, skip: out.count))
            let page = reply.withUnsafeBytes { AuditLog.parse($0) }
            if page.isEmpty { break }
            out = page + out
        }
        return out
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
