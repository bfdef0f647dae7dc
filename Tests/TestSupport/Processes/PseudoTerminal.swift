#if canImport(Glibc)
import Glibc
#endif

/// A new pseudo-terminal: the master descriptor and the slave's path. Glibc's Swift module does not export
/// posix_openpt and its companions (they need _XOPEN_SOURCE), so they are looked up at run time.
public enum PseudoTerminal {
    private typealias OpenPT = @convention(c) (Int32) -> Int32
    private typealias OnMaster = @convention(c) (Int32) -> Int32
    private typealias NameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

    public static func open() -> (Int32, String)? {
        guard let handle = dlopen(nil, RTLD_NOW),
              let openpt = dlsym(handle, "posix_openpt"), let grant = dlsym(handle, "grantpt"),
              let unlock = dlsym(handle, "unlockpt"), let name = dlsym(handle, "ptsname_r") else { return nil }
        let master = unsafeBitCast(openpt, to: OpenPT.self)(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { return nil }
        var path = [CChar](repeating: 0, count: 128)
        guard unsafeBitCast(grant, to: OnMaster.self)(master) == 0,
              unsafeBitCast(unlock, to: OnMaster.self)(master) == 0,
              unsafeBitCast(name, to: NameR.self)(master, &path, path.count) == 0 else {
            close(master)
            return nil
        }
        let length = path.firstIndex(of: 0) ?? path.count
        return (master, String(decoding: path[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
