#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Slots

extension Policy {
    /// The user's own policy at `<configFolder>/policy.json`, nil when there is none: read by `PolicyReading`
    /// alone, which says what nil and a problem give each caller (behind the gate, no file must not tighten
    /// root's policy to the built-in values).
    ///
    /// The folder and the file get the checks of every private file (`SecureFile`): owned by this user,
    /// no access for others, no symlinks; a looser one throws `.slot(.unsafePermissions)` and nothing is
    /// read. A missing folder or file means nil. A file larger than 64 KiB, or one that does not parse,
    /// throws `.configuration` naming the file.
    static func usersOwn(configFolder: String) throws(VaultError) -> Policy? {
        let path = "\(configFolder)/\(fileName)"
        let bytes: [UInt8]?
        do throws(SlotError) {
            guard try SecureFile.privateFolderExists(configFolder) else { return nil }
            bytes = try SecureFile.readPublic(path, maximumCount: maximumDocumentSize)
        } catch {
            if case .tampered = error {  // SecureFile's only `tampered` from a read: the file is too large
                throw .configuration(path: path, detail: "it is larger than 64 KiB, more than any policy needs")
            }
            throw .slot(error)
        }
        guard let bytes else { return nil }
        return try bytes.withTypedUnsafeBytes { (raw) throws(VaultError) -> Policy in try parse(raw, path: path) }
    }

    /// For `policy check FILE`: reads any readable file (no privacy requirement), parses, returns the policy.
    ///
    /// Anything that is not a folder is read (a pipe such as `/dev/stdin` too), at most 64 KiB. A file that
    /// cannot be opened or read throws `.configuration` naming it, as does a document that does not parse.
    public static func check(file: String) throws(VaultError) -> Policy {
        let bytes = try PolicyFileReader.read(file, maximumCount: maximumDocumentSize)
        return try bytes.withTypedUnsafeBytes { (raw) throws(VaultError) -> Policy in try parse(raw, path: file) }
    }
}

/// Reads a file that is not ours to check for privacy: the file named to `vaultctl policy check`.
public enum PolicyFileReader {
    /// The bytes of `path`, at most `maximumCount + 1` of them (one more shows the file is too large).
    public static func read(_ path: String, maximumCount: Int) throws(VaultError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO with no writer must not hang; it is cleared before reading.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw failure(path, "cannot open it", errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure(path, "cannot inspect it", errno) }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw .configuration(path: path, detail: "it is a folder, not a policy file")
        }
        if st.st_mode & S_IFMT == S_IFREG, Int(st.st_size) > maximumCount {
            throw .configuration(path: path, detail: "it is larger than 64 KiB, more than any policy needs")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }

        var buffer = [UInt8](repeating: 0, count: maximumCount + 1)
        var used = 0
        var readError: Int32 = 0
        buffer.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            while used < raw.count {
                let n = Glibc.read(fd, base + used, raw.count - used)
                if n < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    return
                }
                if n == 0 { break }
                used += n
            }
        }
        if readError != 0 { throw failure(path, "cannot read it", readError) }
        if used > maximumCount {
            throw .configuration(path: path, detail: "it is larger than 64 KiB, more than any policy needs")
        }
        return Array(buffer[..<used])
    }

    private static func failure(_ path: String, _ what: String, _ code: Int32) -> VaultError {
        .configuration(path: path, detail: "\(what) (\(String(cString: strerror(code))))")
    }
}
