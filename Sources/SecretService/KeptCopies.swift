import Slots
import Synchronization

/// What a Secret Service provider may keep of the values vaultctl deletes or replaces in it, noted as this
/// process deletes and replaces items, and said once the command is done (`SecretServiceSlot.keptCopiesNotice`).
///
/// gnome-keyring removes a deleted item and a replaced value for good. KeePassXC (2.7.4, read in its
/// src/fdosecrets) keeps them, with its defaults, where the Secret Service API cannot reach them:
/// - `Item.Delete` goes through `Collection::doDeleteEntry`, which moves the entry, value and History
///   included, to the database's Recycle Bin unless "Use recycle bin" is off (then it deletes it for good);
///   `Collection::onEntryAdded` exposes no entry of the Recycle Bin, so no second `Delete` can reach it.
/// - `Item.SetSecret` (and a replacing `CreateItem`) changes the entry inside an `EntryUpdater`, which puts
///   the old entry, value included, into its History, kept up to "Max. history items" (10 by default; 0
///   keeps none). Not always: a change KeePassXC takes while it saves the database (its event loop answers
///   D-Bus while `Database::writeDatabase` has the modified signal off) gets no History item.
/// Both are settings of the database (Database → Database Settings… → General), not readable through the
/// API: vaultctl says what the provider *may* have kept, and how to turn that off, whenever it deleted or
/// replaced an item there.
///
/// `Sendable`: values only; the notebook is behind a `Mutex`.
public struct KeptCopies: Sendable, Equatable {
    /// The collections (object paths) in which this process deleted an item, and in which it replaced one's value.
    public var deletedIn: [String] = []
    public var replacedIn: [String] = []

    /// What this process deleted or replaced in a provider that keeps copies; nil while nothing.
    static let notebook = Mutex<KeptCopies?>(nil)

    enum Change { case deleted, replaced }

    /// Notes that `change` happened in `collection` (an object path) of `provider`; nothing for a provider
    /// that keeps no copies (`Provider.keepsCopies`).
    static func note(_ change: Change, in collection: String, provider: Provider?) {
        guard provider?.keepsCopies == true else { return }
        notebook.withLock { record in
            var r = record ?? KeptCopies()
            switch change {
            case .deleted where !r.deletedIn.contains(collection): r.deletedIn.append(collection)
            case .replaced where !r.replacedIn.contains(collection): r.replacedIn.append(collection)
            default: break
            }
            record = r
        }
    }

    /// The one line for the person: what the provider may have kept, where, and how to turn it off there.
    /// `label` names a collection (a KeePassXC database) by its object path; nil leaves the name out.
    public func notice(label: (String) -> String?) -> String {
        let what: String
        switch (!deletedIn.isEmpty, !replacedIn.isEmpty) {
        case (true, true): what = "moved the deleted item to its Recycle Bin and kept the old value in the item's History"
        case (true, false): what = "moved the deleted item, value included, to its Recycle Bin"
        default: what = "kept the old value in the item's History"
        }
        let names = (deletedIn + replacedIn.filter { !deletedIn.contains($0) }).compactMap(label)
        let database = names.isEmpty ? ""
            : " (database\(names.count > 1 ? "s" : "") \(names.map { "'\($0)'" }.joined(separator: ", ")))"
        return "warning: KeePassXC may have \(what)\(database), out of vaultctl's reach (vaultctl cannot see its settings: "
            + "with \"Max. history items\" 0 and \"Use recycle bin\" unticked, nothing was kept); to keep nothing there, in its "
            + "Database → Database Settings… → General set \"Max. history items\" to 0 and untick \"Use recycle bin\" "
            + "(it offers to empty it)."
    }
}

extension SecretServiceSlot {
    /// The line to say once a command is done when it deleted or replaced an item in a provider known to keep
    /// such copies (`KeptCopies`), naming the databases (one more trip to the provider, only then); nil
    /// otherwise, without a look at the bus.
    public static func keptCopiesNotice(timeout: Double = SecretServiceSlot.defaultTimeout) -> String? {
        guard let kept = KeptCopies.notebook.withLock({ $0 }) else { return nil }
        let paths = kept.deletedIn + kept.replacedIn
        let labels = (try? SecretServiceClient.shared(timeout: timeout, "naming the databases", changes: false) {
            (c) throws(SecretServiceClient.Failure) -> [String: String] in
            // Labels are anyone's words (any program in the session may set them): one line, no controls.
            Dictionary(paths.map { ($0, SlotErrorText.oneLine(c.label(ofCollection: $0), limit: 100)) }) { a, _ in a }
        }) ?? [:]
        return kept.notice { labels[$0] }
    }
}
