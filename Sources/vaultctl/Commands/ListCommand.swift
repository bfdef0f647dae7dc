import JSON
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl list [--json]`: names and modes, never secrets: `NAME<TAB>MODE` lines when piped, columns padded
/// to the longest name on a terminal.
enum ListCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        let listing: (entries: [Vault.Entry], syncError: SlotError?, sync: SlotListing)
        do { listing = try vault.list() } catch { throw ErrorReport.failure(error) }
        // Slots the record says went to the sync slot that neither slot holds here: only when the Secret Service
        // answered in full (no error, no locked collection that may hide items), so it is "not there", not "not seen".
        let complete = listing.syncError == nil && listing.sync.lockedPlaces.isEmpty
        let elsewhere = complete ? vault.recordedInSyncButNotHeld(listing.entries) : []
        if args.has("json") {
            let slots = listing.entries.map { "{\"slot\":\(JSON.string($0.name.rawValue)),\"mode\":\"\($0.mode.rawValue)\"}" }
            let syncError = listing.syncError.map { JSON.string(SlotErrorText.describe($0)) } ?? "null"
            let locked = listing.sync.lockedPlaces.map(JSON.string).joined(separator: ",")
            let boundary = JSON.string(try context.protection().word)
            let notHeld = elsewhere.map { JSON.string($0.rawValue) }.joined(separator: ",")
            Output.out("{\"boundary\":\(boundary),\"lockedCollections\":[\(locked)],\"recordedNotHeld\":[\(notHeld)],\"slots\":[\(slots.joined(separator: ","))],\"syncError\":\(syncError)}\n")
        } else {
            // Tab-separated for scripts; on a terminal, the names padded to the longest so modes line up.
            // One write for the whole listing, not one per line (a thousand slots made a thousand writes).
            let width = Terminal.isTerminal(1) ? listing.entries.map { $0.name.rawValue.count }.max() ?? 0 : 0
            var text = ""
            for e in listing.entries {
                let name = e.name.rawValue
                let gap = width > 0 ? String(repeating: " ", count: width - name.count + 2) : "\t"
                text += "\(name)\(gap)\(e.mode.rawValue)\n"
            }
            Output.out(text)
        }
        let skipped = listing.sync.skipped
        if skipped > 0 {
            Output.message("warning: \(skipped) Secret Service item\(skipped == 1 ? "" : "s") with vaultctl's schema \(skipped == 1 ? "has" : "have") a slot attribute that is not a valid slot name; not listed (another program stored \(skipped == 1 ? "it" : "them")).")
        }
        if !elsewhere.isEmpty {
            Output.message("warning: \(vault.notInRunningService(elsewhere, opening: false)) ('vaultctl status \(elsewhere[0])' says more.)")
        }
        for place in listing.sync.lockedPlaces {
            Output.message("warning: the Secret Service collection '\(place)' is locked; a provider may hide a locked collection's items, so sync slots kept there may be missing from this list (unlock it and list again).")
        }
        // No Secret Service to ask is said only to someone whose record names a sync slot: everyone else, without
        // a bus, would get this line about a keyring they never used on every list (--json says it always, in
        // syncError). A keyring that answered (locked, refused) is always worth the line.
        var unreachable = false
        if case .serviceUnavailable? = listing.syncError { unreachable = true }
        if let e = listing.syncError, !unreachable || vault.recordNamesSyncSlots() {
            Output.message("warning: sync slots not listed: \(SlotErrorText.describe(e))")
        }
    }
}
