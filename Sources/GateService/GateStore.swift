#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// The protected store: `/var/lib/vaultctl` (`root:vaultctl 0770`), one folder per user named by the uid,
/// made by the gate as that user's own (0700): the device key, the device slots, the rate limit, the vault
/// lock and the audit log of that user. Only `vaultctl-gate` (set-group-ID `vaultctl`) can reach it, and the
/// gate reaches only the folder of its real uid. Every path is fixed here; nothing moves it.
public struct GateStore: Sendable {
    public static let root = "/var/lib/vaultctl"
    public static let group = "vaultctl"

    public let uid: uid_t
    /// The store the folder is in: `root`, always, but in the session's in-process tests (`init(base:uid:)`).
    let base: String
    public var folder: String { "\(base)/\(uid)" }

    public init(uid: uid_t) {
        self.uid = uid
        base = GateStore.root
    }

    /// A store elsewhere, for tests of the session that run without root: nothing outside this module's
    /// tests can name it (internal), and the gate's `main` makes its store with `init(uid:)`.
    init(base: String, uid: uid_t) {
        self.uid = uid
        self.base = base
    }

    /// Checks the store itself: a folder owned by root, of the gate's group, with no access for others.
    /// Anything else is not a store an install set up (69, saying what to fix, as this install's installer does).
    public static func checkRoot() throws(VaultError) {
        var st = stat()
        guard lstat(root, &st) == 0 else {
            throw .slot(.gateUnavailable("the protected store \(root) is missing (\(String(cString: strerror(errno)))), which installing vaultctl makes (root:\(group) 0770): \(Installation.current.reinstall)"))
        }
        guard st.st_mode & S_IFMT == S_IFDIR, st.st_uid == 0, st.st_gid == getegid(), st.st_mode & 0o007 == 0 else {
            throw .slot(.gateUnavailable("the protected store \(root) is not a folder owned by root:\(group) without access for others (mode \(String(st.st_mode & 0o7777, radix: 8)), owner \(st.st_uid):\(st.st_gid)); fix it with 'chown root:\(group) \(root); chmod 0770 \(root)'"))
        }
    }

    /// Whether this user's folder exists (checked as every private folder is: a folder of this user, 0700).
    public func exists() throws(VaultError) -> Bool {
        do { return try SecureFile.privateFolderExists(folder) } catch { throw .slot(error) }
    }

    /// The marker that says this user's vault is protected: written by a first change through the gate, or
    /// by `device-key protect` once every slot of the vault from before is in. Until then the CLI keeps using
    /// the state folder's vault (a move under way leaves every slot readable there).
    var marker: String { "\(folder)/protected" }

    public func isProtected() throws(VaultError) -> Bool {
        guard try exists() else { return false }
        do { return try SecureFile.privateFileExists(marker) } catch { throw .slot(error) }
    }

    /// Makes this user's folder when there is none (its parent, the store, is never made here); `marking`:
    /// and says the vault is protected.
    public func ensure(marking: Bool) throws(VaultError) {
        if try !exists() {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw .slot(.io(path: folder, errno: errno, operation: "create folder"))
            }
            _ = try exists()
        }
        if marking, try !isProtected() {
            do { try SecureFile.write(marker, Array("protected\n".utf8)) } catch { throw .slot(error) }
        }
    }
}
