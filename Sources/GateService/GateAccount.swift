#if canImport(Glibc)
import Glibc
#endif
import Slots
import Vault

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
/// the account that runs it (docs/gate.md says so).
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
        /// The folder is this account's: its record names this user and its id is in this home.
        case bound
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
            throw .refused("the protected vault of user id \(uid) (\(folder)) belongs to the account '\(record.user)', not to '\(user)': an account that was deleted, whose user id was given to yours. vaultctl-gate will not open it for you; \(Self.remedy(uid: uid))")
        }
        let homeID = HomeFile.read(home: home, components: Self.homePath, uid: uid).flatMap(Self.parseHome)
        guard let homeID, Self.sameID(homeID, record.id) else {
            let found = homeID == nil ? "holds no vaultctl account id (\(homeFile))" : "holds another account id (\(homeFile))"
            throw .refused("the protected vault of user id \(uid) (\(folder)) was made for an account '\(user)' whose home held its account id, and this home \(found): it may belong to an earlier account with your name and user id. vaultctl-gate will not open it; if it is yours (your home was restored or made again), ask root to bind it to this home again, else \(Self.remedy(uid: uid))")
        }
        return .bound
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
        HomeFile.read(home: home, components: Self.homePath, uid: uid).flatMap(Self.parseHome)
    }

    /// Writes the folder's record (the gate's group, in its own folder).
    func writeRecord(id: String) throws(VaultError) {
        do { try SecureFile.write(recordPath, Array("\(Self.recordHeader)\nuser \(user)\nid \(id)\n".utf8)) } catch { throw .slot(error) }
    }

    /// A new random id (32 bytes, lowercase hex).
    static func newID() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        SecretBytes.random(count: 32).withUnsafeBytes { raw in
            for b in raw {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

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

/// A small file under a home, read by the gate without following any symbolic link on the way: each folder
/// is opened from the one before with `O_NOFOLLOW`, so no link the user made can lead the gate (which holds
/// the store's group) into the store. Only a regular file of `uid`'s, 4 KiB at most, is read.
enum HomeFile {
    static func read(home: String, components: [String], uid: uid_t) -> [UInt8]? {
        var fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        for (i, name) in components.enumerated() {
            let last = i == components.count - 1
            let next = openat(fd, name, (last ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC)
            close(fd)
            guard next >= 0 else { return nil }
            fd = next
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == uid, st.st_size <= 4096 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var used = 0
        while used < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, $0.count - used) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            used += n
        }
        return Array(bytes[0..<used])
    }
}
