#if canImport(Glibc)
import Glibc
#endif
import Slots
import Vault

/// The policy the gate enforces: `/etc/vaultctl/policy.json` when root has put one there, else the
/// built-in one. Never the user's own file: a program running as the user could loosen that.
public enum GatePolicy {
    public static let folder = "/etc/vaultctl"
    public static let path = "\(folder)/policy.json"

    /// The root policy; a file (or folder) that root does not own, or that others may write, is refused
    /// (78) rather than read.
    public static func load() throws(VaultError) -> Policy {
        var st = stat()
        guard lstat(path, &st) == 0 else { return .builtIn }
        for (p, wantFolder) in [(folder, true), (path, false)] {
            guard lstat(p, &st) == 0 else { return .builtIn }
            let isFolder = st.st_mode & S_IFMT == S_IFDIR
            guard isFolder == wantFolder, wantFolder || st.st_mode & S_IFMT == S_IFREG, st.st_uid == 0,
                  st.st_mode & 0o022 == 0 else {
                throw .configuration(path: p, detail: "it must be a \(wantFolder ? "folder" : "regular file") owned by root that only root may write (mode \(String(st.st_mode & 0o7777, radix: 8)), owner \(st.st_uid))")
            }
        }
        return try Policy.check(file: path)
    }
}
