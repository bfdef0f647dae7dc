import Slots
import Vault

/// `vaultctl list [--json]`: names and modes, never secrets.
enum ListCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        let listing: (entries: [Vault.Entry], syncError: SlotError?)
        do { listing = try vault.list() } catch { throw ErrorReport.failure(error) }
        if args.has("json") {
            let slots = listing.entries.map { "{\"slot\":\(JSON.string($0.name.rawValue)),\"mode\":\"\($0.mode.rawValue)\"}" }
            let syncError = listing.syncError.map { JSON.string(SlotErrorText.describe($0)) } ?? "null"
            Output.out("{\"slots\":[\(slots.joined(separator: ","))],\"syncError\":\(syncError)}\n")
        } else {
            for e in listing.entries { Output.out("\(e.name)\t\(e.mode.rawValue)\n") }
        }
        if let e = listing.syncError {
            Output.message("warning: sync slots not listed: \(SlotErrorText.describe(e))")
        }
    }
}
