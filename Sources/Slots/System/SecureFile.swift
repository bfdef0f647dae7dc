#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Private files done carefully: folders 0700, files 0600, both owned by us and never symlinks; writes are
/// atomic (temp file, fsync, rename, fsync the folder). Anything looser is refused, and nothing is read from it.
public enum SecureFile {
    /// Creates `path` (and missing parents) as a private folder, or checks the one that is there.
    public static func ensurePrivateFolder(_ path: String) throws(SlotError) {
        var st = stat()
        if lstat(path, &st) != 0 {
            let e = errno
            if e == ENOTDIR { throw notAFolderAbove(path) }
            guard e == ENOENT else { throw .io(path: path, errno: e, operation: "inspect") }
            try makeParents(of: path)
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw .io(path: path, errno: errno, operation: "create folder")
            }
            guard lstat(path, &st) == 0 else { throw .io(path: path, errno: errno, operation: "inspect") }
        }
        try checkPrivate(path: path, st, wantDirectory: true)
    }

    /// Checks an existing private folder without creating it; returns false when it does not exist.
    public static func privateFolderExists(_ path: String) throws(SlotError) -> Bool {
        var st = stat()
        if lstat(path, &st) != 0 {
            let e = errno
            if e == ENOENT { return false }
            if e == ENOTDIR { throw notAFolderAbove(path) }
            throw .io(path: path, errno: e, operation: "inspect")
        }
        try checkPrivate(path: path, st, wantDirectory: true)
        return true
    }

    /// The error for a path whose lookup met a file where a folder should be (ENOTDIR): names the nearest
    /// ancestor that is not a folder.
    static func notAFolderAbove(_ path: String) -> SlotError {
        var p = parent(of: path)
        var st = stat()
        while p != "/" && p != "." {
            if lstat(p, &st) == 0 && st.st_mode & S_IFMT != S_IFDIR {
                return .unsafePermissions(path: p, detail: "it is not a folder")
            }
            p = parent(of: p)
        }
        return .unsafePermissions(path: path, detail: "a part of the path is not a folder")
    }

    /// Checks an open descriptor the way every private file is checked (a regular file, ours, 0600 or
    /// stricter): for lock files, which are opened, not read.
    public static func checkPrivate(descriptor fd: Int32, path: String) throws(SlotError) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(path: path, errno: errno, operation: "inspect") }
        try checkPrivate(path: path, st, wantDirectory: false)
    }

    /// Checks that an existing file is private (ours, 0600 or stricter, a regular file, not a symlink)
    /// without reading it; returns false when it does not exist.
    public static func privateFileExists(_ path: String) throws(SlotError) -> Bool {
        guard let (fd, _) = try openPrivateFile(path) else { return false }
        close(fd)
        return true
    }

    /// Opens an existing private file for reading and checks it (ours, 0600 or stricter, a regular file, not
    /// a symlink); nil when it does not exist. The caller closes the descriptor.
    static func openPrivateFile(_ path: String) throws(SlotError) -> (Int32, stat)? {
        // O_NONBLOCK: a FIFO planted at the path must not block the open; its type is refused below.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 {
            let e = errno
            if e == ENOENT { return nil }
            if e == ELOOP { throw .unsafePermissions(path: path, detail: "it is a symbolic link") }
            throw .io(path: path, errno: e, operation: "open")
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw .io(path: path, errno: e, operation: "inspect")
        }
        do {
            try checkPrivate(path: path, st, wantDirectory: false)
        } catch {
            close(fd)
            throw error
        }
        return (fd, st)
    }

    /// Reads a private file whole into a wiped buffer; nil when it does not exist. For secrets (the device
    /// key); files that hold none use `readPublic`, which spares the locked allocation.
    public static func read(_ path: String, maximumCount: Int) throws(SlotError) -> SecretBytes? {
        try readWhole(path, maximumCount: maximumCount) { fd, capacity in
            let buffer = SecretBytes(capacity: capacity)
            let failure = buffer.withUnsafeMutableBytes { raw, used in readAll(fd, into: raw, used: &used) }
            return (buffer, buffer.count, failure)
        }
    }

    /// The first `count` bytes of a private file (fewer when it is shorter) and its size, with `read`'s
    /// checks; nil when it does not exist. For a check that needs only a header that holds no secret: the
    /// rest of the file is never read.
    public static func readHeader(_ path: String, count: Int) throws(SlotError) -> (header: [UInt8], size: Int)? {
        guard let (fd, st) = try openPrivateFile(path) else { return nil }
        defer { close(fd) }
        var failure: Int32 = 0
        let header = [UInt8](unsafeUninitializedCapacity: count) { raw, used in
            used = 0
            failure = readAll(fd, into: UnsafeMutableRawBufferPointer(raw), used: &used)
        }
        if failure != 0 { throw .io(path: path, errno: failure, operation: "read") }
        return (header, Int(st.st_size))
    }

    /// `read` for files that hold no secret (records, state, policy, sealed files): the same checks, into
    /// an ordinary array.
    public static func readPublic(_ path: String, maximumCount: Int) throws(SlotError) -> [UInt8]? {
        try readWhole(path, maximumCount: maximumCount) { fd, capacity in
            var failure: Int32 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { raw, count in
                count = 0
                failure = readAll(fd, into: UnsafeMutableRawBufferPointer(raw), used: &count)
            }
            return (bytes, bytes.count, failure)
        }
    }

    /// What `read` and `readPublic` share: open and check the file, then `fill` a buffer of the file's size
    /// plus one byte, at most `maximumCount + 1`. Sized to the file, not to the limit: secret buffers are
    /// locked memory, a scarce resource (RLIMIT_MEMLOCK). Files are replaced by rename, so an open file
    /// does not grow; the byte more tells if it did. `fill` returns the buffer, the bytes it read and the
    /// errno of a failed read (0 if none).
    private static func readWhole<Buffer>(_ path: String, maximumCount: Int,
                                          fill: (Int32, Int) -> (Buffer, count: Int, failure: Int32)) throws(SlotError) -> Buffer? {
        guard let (fd, st) = try openPrivateFile(path) else { return nil }
        defer { close(fd) }
        try checkSize(st, maximumCount, path)
        let (buffer, count, failure) = fill(fd, min(Int(st.st_size), maximumCount) + 1)
        if failure != 0 { throw .io(path: path, errno: failure, operation: "read") }
        if count > maximumCount {
            throw .tampered(path: path, detail: "it is larger than any file vaultctl writes")
        }
        return buffer
    }

    private static func checkSize(_ st: stat, _ maximumCount: Int, _ path: String) throws(SlotError) {
        guard Int(st.st_size) <= maximumCount else {
            throw .tampered(path: path, detail: "it is larger than any file vaultctl writes")
        }
    }

    /// Reads until the buffer is full or the file ends; the errno of a failed read, or 0.
    private static func readAll(_ fd: Int32, into raw: UnsafeMutableRawBufferPointer, used: inout Int) -> Int32 {
        while used < raw.count {
            let n = Glibc.read(fd, raw.baseAddress! + used, raw.count - used)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { break }
            used += n
        }
        return 0
    }

    /// Replaces `path` atomically with `bytes`: a 0600 temp file beside it, fsync, rename, fsync the folder.
    /// With `exclusive`, an existing file is kept and `false` is returned (the new bytes are dropped).
    @discardableResult
    public static func write(_ path: String, _ bytes: UnsafeRawBufferPointer, exclusive: Bool = false) throws(SlotError) -> Bool {
        let folder = parent(of: path)
        sweepStaleTemporaries(in: folder)
        let temp = "\(folder)/.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: temp, errno: errno, operation: "create") }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        var written = 0
        while written < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                close(fd)
                throw .io(path: temp, errno: e, operation: "write")
            }
            written += n
        }
        if fsync(fd) != 0 {
            let e = errno
            close(fd)
            throw .io(path: temp, errno: e, operation: "fsync")
        }
        close(fd)
        if exclusive {
            if link(temp, path) != 0 {
                let e = errno
                if e == EEXIST { return false }
                throw .io(path: path, errno: e, operation: "link")
            }
            unlink(temp)
        } else if rename(temp, path) != 0 {
            throw .io(path: path, errno: errno, operation: "rename")
        }
        ok = true
        try syncFolder(folder)
        return true
    }

    /// Appends to a private file (created 0600), refusing one that is not private. The caller holds a lock
    /// if several writers may append at once. A line goes out in one `write` with `O_APPEND`, so a reader or
    /// a kill sees it whole or not at all (a short write is truncated away); it is not flushed to disk line by line (auditd's default,
    /// `incremental_async`, and journald do the same): that flush waited on the disk for up to 0.3 ms of
    /// every gated read, for the last line before a power cut.
    public static func append(_ path: String, _ bytes: UnsafeRawBufferPointer) throws(SlotError) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        if fd < 0 {
            let e = errno
            if e == ELOOP { throw .unsafePermissions(path: path, detail: "it is a symbolic link") }
            throw .io(path: path, errno: e, operation: "open")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(path: path, errno: errno, operation: "inspect") }
        try checkPrivate(path: path, st, wantDirectory: false)
        // A line is appended whole or not at all: a short write (a caller's RLIMIT_FSIZE, a full disk) is
        // taken back, so no fragment is left for the next line to be glued to (and lost with it).
        let start = st.st_size
        var written = 0
        while written < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let e = n < 0 ? errno : ENOSPC
                if written > 0 { _ = ftruncate(fd, start) }
                throw .io(path: path, errno: e, operation: "append to")
            }
            written += n
        }
    }

    /// `write` for bytes that are not secret (sealed files, records, state).
    public static func write(_ path: String, _ bytes: [UInt8]) throws(SlotError) {
        _ = try bytes.withTypedUnsafeBytes { (raw) throws(SlotError) -> Bool in try write(path, raw) }
    }

    /// Removes `.tmp-PID-…` files left by writers that were killed (their process is gone). Best effort.
    static func sweepStaleTemporaries(in folder: String) {
        guard let dir = opendir(folder) else { return }
        var stale: [String] = []
        while let entry = readdir(dir) {
            let name = direntName(entry)
            guard name.hasPrefix(".tmp-") else { continue }
            let fields = name.dropFirst(5).split(separator: "-")
            guard let first = fields.first, let pid = Int32(first), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append(name) }
        }
        closedir(dir)
        for name in stale { unlink("\(folder)/\(name)") }
    }

    /// Removes a file and makes the removal durable; returns false when there was none.
    @discardableResult
    public static func remove(_ path: String) throws(SlotError) -> Bool {
        if unlink(path) != 0 {
            let e = errno
            if e == ENOENT { return false }
            throw .io(path: path, errno: e, operation: "remove")
        }
        try syncFolder(parent(of: path))
        return true
    }

    /// Names of the entries in a folder (not `.`/`..`, not hidden temp files).
    public static func entries(of folder: String) throws(SlotError) -> [String] {
        guard let dir = opendir(folder) else {
            let e = errno
            if e == ENOENT { return [] }
            throw .io(path: folder, errno: e, operation: "list")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = direntName(entry)
            if name.hasPrefix(".") { continue }
            names.append(name)
        }
        return names
    }

    static func syncFolder(_ folder: String) throws(SlotError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: folder, errno: errno, operation: "open folder") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw .io(path: folder, errno: errno, operation: "fsync folder") }
    }

    static func checkPrivate(path: String, _ st: stat, wantDirectory: Bool) throws(SlotError) {
        let type = st.st_mode & S_IFMT
        if type == S_IFLNK { throw .unsafePermissions(path: path, detail: "it is a symbolic link") }
        if wantDirectory && type != S_IFDIR { throw .unsafePermissions(path: path, detail: "it is not a folder") }
        if !wantDirectory && type != S_IFREG { throw .unsafePermissions(path: path, detail: "it is not a regular file") }
        if st.st_uid != geteuid() {
            throw .unsafePermissions(path: path, detail: "it is owned by uid \(st.st_uid), not by you")
        }
        if st.st_mode & 0o077 != 0 {
            let want = wantDirectory ? "700" : "600"
            let have = String(st.st_mode & 0o777, radix: 8)
            throw .unsafePermissions(path: path, detail: "its mode \(have) lets others in; run chmod \(want) on it")
        }
    }

    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let p = String(path[..<slash])
        return p.isEmpty ? "/" : p
    }

    private static func makeParents(of path: String) throws(SlotError) {
        let p = parent(of: path)
        if p == "/" || p == "." { return }
        var st = stat()
        if stat(p, &st) == 0 { return }
        try makeParents(of: p)
        if mkdir(p, 0o700) != 0 && errno != EEXIST {
            throw .io(path: p, errno: errno, operation: "create folder")
        }
    }
}

/// The name in a `readdir` entry, read in place. A `dirent` is only as long as its name (`d_reclen`), so
/// copying `entry.pointee` whole can read past the end of the kernel's buffer.
public func direntName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
}
