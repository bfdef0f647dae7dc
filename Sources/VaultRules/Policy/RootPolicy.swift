#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Root's policy for protected vaults: `/etc/vaultctl/policy.json` when root has put one there (else the
/// built-in one). A protected vault's policy is this tightened by the user's own, which may ask for more and
/// never for less: a program running as the user can write the user's file (`PolicyReading.effective`).
public enum RootPolicy {
    public static let folder = "/etc/vaultctl"
    public static let path = "\(folder)/policy.json"

    /// Root's policy; a file (or folder) that root does not own, or that others may write, is refused (78)
    /// rather than read.
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

extension Policy {
    /// This policy with whatever `other` asks for beyond it, and nothing it relaxes: fewer failures allowed,
    /// longer windows and blocks, every gate either one sets, the shorter askpass bound, more ranges
    /// counted remote and only the nearby ranges both name, supply allowed by default only when both allow it.
    public func tightened(by other: Policy) -> Policy {
        var p = self
        p.rateLimit = RateLimitPolicy(failures: min(rateLimit.failures, other.rateLimit.failures),
                                      windowSeconds: max(rateLimit.windowSeconds, other.rateLimit.windowSeconds),
                                      blockSeconds: max(rateLimit.blockSeconds, other.rateLimit.blockSeconds))
        p.gates = ChangeGates(storeOver: gates.storeOver || other.gates.storeOver, delete: gates.delete || other.gates.delete)
        p.askpassSeconds = min(askpassSeconds, other.askpassSeconds)
        p.authenticationSeconds = min(authenticationSeconds, other.authenticationSeconds)
        p.remoteRanges = remoteRanges + other.remoteRanges.filter { !remoteRanges.contains($0) }
        p.nearbyRanges = nearbyRanges.filter { other.nearbyRanges.contains($0) }
        p.allowSupplyByDefault = allowSupplyByDefault && other.allowSupplyByDefault
        return p
    }
}
