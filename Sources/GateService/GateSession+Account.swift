#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// The user's folder of the store and the account it belongs to (`GateAccount`): checked before the hello,
/// bound when the folder is made.
extension GateSession {
    /// This user's folder is this account's (`GateAccount`): a folder from before the binding is bound now.
    func checkAccount() throws(VaultError) {
        guard try store.exists() else { return }  // a new vault: bound when its folder is made
        switch try account.standing() {
        case .bound(let id):
            boundID = id
        case .unbound:
            try account.checkMayBind()
            let id = try homeID()
            try account.writeRecord(id: id)
            boundID = id
        }
    }

    /// Makes this user's folder when there is none, bound to this account, and (`marking`) protected. The record
    /// is the first thing in a new folder: one that cannot be written takes the folder away again, so no
    /// secret ever lies in a folder that a later account with this uid could take as its own.
    func ensureStore(marking: Bool) throws(VaultError) {
        if boundID == nil {
            var id = try homeID()
            let made = try !store.exists()
            try store.ensure(marking: false)
            do throws(VaultError) {
                var needsRecord = made
                if !made {
                    switch try account.standing() {
                    case .bound(let recorded): id = recorded  // made meanwhile by another gate of this account
                    case .unbound:
                        try account.checkMayBind()
                        needsRecord = true
                    }
                }
                if needsRecord { try account.writeRecord(id: id) }
            } catch {
                if made { rmdir(store.folder) }  // empty: a write that fails removes its temporary file
                throw error
            }
            boundID = id
        }
        try store.ensure(marking: marking)
    }

    /// This account's id in its home: the one there, or a new one put there. Written exclusively (a link, never
    /// a replace), so two gates that bind at once agree on the id the first one wrote. Written as the user, with
    /// the gate's group dropped: a home is the user's to shape, and nothing the group alone may reach is
    /// written there.
    func homeID() throws(VaultError) -> String {
        if let id = account.homeID() { return id }
        // The group drop is the whole process's (glibc applies it to every thread): the prepared work first.
        _ = prepared?.value()
        try GroupDrop.asUser("write in your home") { () throws(VaultError) in try account.bindHome(id: GateAccount.newID()) }
        guard let id = account.homeID() else {
            throw .slot(.gateUnavailable("your account's id is not readable in your home (\(account.homeFile)) right after it was written"))
        }
        return id
    }
}
