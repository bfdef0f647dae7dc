#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Slots
import GateProtocol
import VaultRules

/// Which account a user's folder in the protected store belongs to, not only which uid: a deleted account's
/// uid is given to the next account made (Debian's `useradd` reuses a freed uid), and `userdel -r` removes
/// the home but not `/var/lib/vaultctl/UID`, so a folder named by the uid alone passed one account's secrets,
/// rate limit and log to the next.
///
/// The folder holds `account` (the gate's own: the user name, and a random id); the account's home holds the
/// same id in `~/.local/share/vaultctl/account` (where the account's other keyrings live: gnome-keyring's are
/// in `~/.local/share/keyrings`). A later account with the same uid has another name, or a new home without
/// that id (`userdel -r` removed the old one), and its gate refuses the folder (77) before it looks at
/// anything in it. An account whose home still holds the id (deleted without `-r`, the home given to the
/// next account) has the old account's files anyway, as with every keyring kept in a home.
///
/// A folder made by a gate from before this binding has no `account`: the first gate run for it binds it to
/// the account that runs it, unless the account's home was made after the folder (an account made after the
/// folder is not the one that made it; where the file systems keep birth times), and docs/gate.md says so.
///
/// Not `Sendable`: made and used by the gate's main thread only.
public struct GateAccount {
    /// The record's name in the user's folder of the store.
    static let recordName = "account"
    /// The id's place in the home (the gate sees no XDG_DATA_HOME: the default one, as for the policy).
    static let homePath = [".local", "share", "vaultctl", "account"]
    static let recordHeader = "vaultctl-gate account 1"
    static let homeHeader = "vaultctl account id 1"

    let folder: String
    let user: String
    let home: String
    let uid: uid_t

    public init(folder: String, user: String, home: String, uid: uid_t = getuid()) {
        self.folder = folder
        self.user = user
        self.home = home
        self.uid = uid
    }

    var recordPath: String { "\(folder)/\(Self.recordName)" }
    var homeFile: String { ([home] + Self.homePath).joined(separator: "/") }

    /// What the folder's record says.
    struct Record: Equatable {
        let user: String
        let id: String
    }

    /// How the folder stands with this account.
    enum Standing: Equatable {
        /// The folder is this account's: its record names this user and its id (`id`) is in this home.
        case bound(id: String)
        /// The folder has no record (made by a gate from before the binding): to be bound now.
        case unbound
    }

    /// Checks an existing folder against this account; throws `refused` (77) when it belongs to another one.
    func standing() throws(VaultError) -> Standing {
        let raw: [UInt8]?
        do { raw = try SecureFile.readPublic(recordPath, maximumCount: 4096) } catch { throw .slot(error) }
        guard let raw else { return .unbound }
        guard let record = Self.parseRecord(raw) else {
            throw .slot(.tampered(path: recordPath, detail: "it is not an account record of vaultctl-gate"))
        }
        guard record.user == user else {
            throw .refused("the protected vault of user id \(uid) (\(folder)) belongs to the account '\(record.user)', not to '\(user)': an account deleted (its user id given to yours) or renamed. vaultctl-gate will not open it for you; if you were renamed from '\(record.user)', root can bind it to your name (docs/gate.md, \"Accounts\"), else \(Self.remedy(uid: uid))")
        }
        let found: String
        switch HomeFile.read(home: home, components: Self.homePath, uid: uid) {
        case .bytes(let raw):
            guard let id = Self.parseHome(raw) else { found = "holds something else than a vaultctl account id"; break }
            if Self.sameID(id, record.id) { return .bound(id: id) }  // the home's: what a later account lacks
            found = "holds another account id"
        case .missing:
            found = "holds no vaultctl account id"
        case .other(let what):
            found = "holds no vaultctl account id there (\(what))"
        case .unreadable(let why):
            // Not a stranger's home: one that cannot be read now (not mounted, not the user's). Nothing to retire.
            throw .slot(.gateUnavailable("vaultctl-gate could not read your account's id in your home (\(homeFile): \(why)): is your home mounted, and that file yours? It keeps your vault from a later account with your user id, so the vault stays closed until it can be read"))
        }
        throw .refused("the protected vault of user id \(uid) (\(folder)) was made for an account '\(user)' whose home held its account id, and this home \(found) (\(homeFile)). If your home is not all there now (not mounted, an encrypted home not unlocked), mount or unlock it and try again: nothing is lost. Otherwise the vault may belong to an earlier account with your name and user id, and vaultctl-gate will not open it; if it is yours (your home was restored or made again), root can give your home its id back (docs/gate.md, \"Accounts\"), else \(Self.remedy(uid: uid))")
    }

    /// Refuses (77) to bind a folder without a record to an account whose home was made after the folder:
    /// that account did not make it (an earlier one with this uid did, and was deleted before vaultctl bound
    /// folders). Where either file system keeps no birth time, nothing is refused.
    func checkMayBind() throws(VaultError) {
        let folderBorn = vaultctl_birth_time(folder), homeBorn = vaultctl_birth_time(home)
        guard folderBorn >= 0, homeBorn >= 0, homeBorn > folderBorn else { return }
        throw .refused("the protected vault of user id \(uid) (\(folder)) was made before your home (\(home)) and names no account: it may be an earlier account's with your user id, deleted before vaultctl bound vaults to accounts. vaultctl-gate will not open it; if it is yours (your home was made again), root can bind it to you (docs/gate.md, \"Accounts\"), else \(Self.remedy(uid: uid))")
    }

    /// Puts `id` in the home (as the user, with the gate's group dropped by the caller), unless an id is there
    /// already: created exclusively (a link), so of two gates binding at once the first one's id stays and the
    /// other reads it back.
    func bindHome(id: String) throws(VaultError) {
        do {
            try SecureFile.ensurePrivateFolder(SecureFile.parent(of: homeFile))
            _ = try Array("\(Self.homeHeader) \(id)\n".utf8).withTypedUnsafeBytes { (raw) throws(SlotError) -> Bool in
                try SecureFile.write(homeFile, raw, exclusive: true)
            }
        } catch {
            throw .slot(.gateUnavailable("vaultctl-gate keeps your account's id in your home (\(homeFile)), so that a later account with your user id cannot open your vault, and it could not write it: \(SlotErrorText.describe(error))"))
        }
    }

    /// The id this home holds already, if any (read as `standing` reads it).
    func homeID() -> String? {
        if case .bytes(let raw) = HomeFile.read(home: home, components: Self.homePath, uid: uid) { return Self.parseHome(raw) }
        return nil
    }

    /// Writes the folder's record (the gate's group, in its own folder).
    func writeRecord(id: String) throws(VaultError) {
        do { try SecureFile.write(recordPath, Array("\(Self.recordHeader)\nuser \(user)\nid \(id)\n".utf8)) } catch { throw .slot(error) }
    }

    /// A new random id (32 bytes, lowercase hex).
    static func newID() -> String { Hex.encode(SecretBytes.random(count: 32)) }

    /// What root can do, in the words of a refusal.
    static func remedy(uid: uid_t) -> String {
        "root can retire that vault with 'sudo rm -r \(GateStore.root)/\(uid)' (its secrets are lost), and your next store makes yours (docs/gate.md, \"Accounts\")"
    }

    static func parseRecord(_ raw: [UInt8]) -> Record? {
        guard let text = String(validating: raw, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 4, lines[0] == recordHeader, lines[3].isEmpty,
              lines[1].hasPrefix("user "), lines[2].hasPrefix("id ") else { return nil }
        let user = String(lines[1].dropFirst(5)), id = String(lines[2].dropFirst(3))
        guard !user.isEmpty, isID(id) else { return nil }
        return Record(user: user, id: id)
    }

    static func parseHome(_ raw: [UInt8]) -> String? {
        guard let text = String(validating: raw, as: UTF8.self), text.hasPrefix(homeHeader + " "), text.hasSuffix("\n") else { return nil }
        let id = String(text.dropFirst(homeHeader.utf8.count + 1).dropLast())
        return isID(id) ? id : nil
    }

    static func isID(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// Compared in constant time: the id is what a later account would have to guess.
    static func sameID(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var d: UInt8 = 0
        for i in 0..<x.count { d |= x[i] ^ y[i] }
        return d == 0
    }
}
