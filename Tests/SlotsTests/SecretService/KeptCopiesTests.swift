import Testing
@testable import SecretService
@testable import Slots

/// The words after a command that deleted or replaced an item in a provider that may keep copies, and which
/// providers get them (the end-to-end tests run real KeePassXC and gnome-keyring: ProviderKeptCopiesTests).
@Suite struct KeptCopiesTests {
    private let db = "/org/freedesktop/secrets/collection/db"
    private let other = "/org/freedesktop/secrets/collection/other"
    private func label(_ path: String) -> String? {
        [db: "Passwords", other: "Work"][path]
    }

    @Test func onlyKeePassXCIsKnownToKeepCopies() {
        #expect(Provider(processName: "keepassxc").keepsCopies)
        for name in ["gnome-keyring-d", "kwalletd5", "ksecretd", "python3", ""] {
            #expect(!Provider(processName: name).keepsCopies, "\(name)")
        }
    }

    @Test func aDeleteNamesTheRecycleBinTheDatabaseAndBothSettings() {
        let notice = KeptCopies(deletedIn: [db]).notice(label: label)
        #expect(notice == "warning: KeePassXC may have moved the deleted item, value included, to its Recycle Bin (database 'Passwords'), out of vaultctl's reach (vaultctl cannot see its settings: with \"Max. history items\" 0 and \"Use recycle bin\" unticked, nothing was kept); to keep nothing there, in its Database → Database Settings… → General set \"Max. history items\" to 0 and untick \"Use recycle bin\" (it offers to empty it).")
    }

    @Test func aReplacementNamesTheHistory() {
        let notice = KeptCopies(replacedIn: [db]).notice(label: label)
        #expect(notice.hasPrefix("warning: KeePassXC may have kept the old value in the item's History (database 'Passwords'), out of vaultctl's reach (vaultctl cannot see its settings: "))
        #expect(!notice.contains("moved the deleted item"))
    }

    @Test func bothNameBothAndEachDatabaseOnce() {
        let notice = KeptCopies(deletedIn: [db, other], replacedIn: [db]).notice(label: label)
        #expect(notice.contains("moved the deleted item to its Recycle Bin and kept the old value in the item's History (databases 'Passwords', 'Work')"), "\(notice)")
    }

    @Test func aDatabaseWithoutALabelIsLeftUnnamed() {
        let notice = KeptCopies(deletedIn: [db]).notice(label: { _ in nil })
        #expect(notice.contains("to its Recycle Bin, out of vaultctl's reach"), "\(notice)")
        #expect(!notice.contains("database '"))
        #expect(!notice.contains("\n"))
    }
}
