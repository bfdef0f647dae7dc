import Slots
import Vault

/// `vaultctl list [--json]`: names and modes, never secrets.
enum ListCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        let listing: (entries: [Vault.Entry], syncError: SlotError?, skipped: Int)
        do { listing = try vault.list() } catch { throw ErrorReport.failure(error) }
        if args.has("json") {
            let slots = listing.entries.map { "{\"slot\":\(JSON.string($0.name.rawValue)),\"mode\":\"\($0.mode.rawValue)\"}" }
            let syncError = listing.syncError.map { JSON.string(SlotErrorText.describe($0)) } ?? "null"
            Output.out("{\"slots\":[\(slots.joined(separator: ","))],\"syncError\":\(syncError)}\n")
        } else {
            for e in listing.entries { Output.out("\(e.name)\t\(e.mode.rawValue)\n") }
        }
        if listing.skipped > 0 {
            Output.err("vaultctl: warning: \(listing.skipped) Secret Service item\(listing.skipped == 1 ? "" : "s") with vaultctl's schema \(listing.skipped == 1 ? "has" : "have") a slot attribute that is not a valid slot name; not listed (another program stored \(listing.skipped == 1 ? "it" : "them")).\n")
        }
        if let e = listing.syncError {
            Output.err("vaultctl: warning: sync slots not listed: \(SlotErrorText.describe(e))\n")
        }
    }
}
