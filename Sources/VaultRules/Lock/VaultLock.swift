#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The vault's own lock: a marker file `<state>/locked`. Locking is cheap and allowed from anywhere;
/// unlocking needs a nearby origin and PAM (the CLI enforces that).
public struct VaultLock: Sendable {
    public let folder: String
    var path: String { "\(folder)/locked" }

    public init(folder: String) {
        self.folder = folder
    }

    public func isLocked() throws(VaultError) -> Bool {
        do {
            guard try SecureFile.privateFolderExists(folder) else { return false }
            // A marker that is not a private regular file (a folder, a symlink, loose permissions) is refused
            // (78) rather than taken for "locked" or "unlocked": it was not made by vaultctl.
            return try SecureFile.privateFileExists(path)
        } catch {
            throw .slot(error)
        }
    }

    public func lock(time: Double, origin: String) throws(VaultError) {
        let text = Array("locked at \(TimeText.iso8601(time)) from \(origin)\n".utf8)
        do {
            try SecureFile.ensurePrivateFolder(folder)
            try SecureFile.write(path, text)
        } catch {
            throw .slot(error)
        }
    }

    public func unlock() throws(VaultError) {
        do { try SecureFile.remove(path) } catch { throw .slot(error) }
    }
}
