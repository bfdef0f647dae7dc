#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import VaultRules

/// Runs work as the user alone: the gate's group (`vaultctl`) dropped from the effective group while it runs,
/// and taken back after (the saved set-group-ID keeps it). For what the gate reads or writes in the user's
/// home, which is the user's to shape (a link into the store): only what the user may reach is reached there,
/// and what is made there is the user's own. The drop is the whole process's (glibc applies it to every
/// thread): callers make sure no other thread of the gate is at work (the prepared origin's thread is done).
public enum GroupDrop {
    public static func asUser<T>(_ doing: String, _ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        let raised = getegid()
        guard setegid(getgid()) == 0 else { throw .slot(.gateUnavailable("it could not drop its group to \(doing)")) }
        let result = Result { () throws(VaultError) -> T in try body() }
        guard setegid(raised) == 0 else { throw .slot(.gateUnavailable("it could not take its group back after it went to \(doing)")) }
        return try result.get()
    }
}
