#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The append-only audit log: `<state>/audit.log`, one JSON object per line (compact, sorted keys), 0600,
/// appended under `flock`.
/// Past 1 MiB it is rotated to `audit.log.1` (one generation kept; `entries` reads both).
public struct AuditLog: Sendable {
    public let folder: String
    public static let rotateAt = 1024 * 1024
    public var path: String { "\(folder)/audit.log" }

    /// One entry as the log holds it: its JSON and a newline.
    public static func line(_ entry: AuditEntry) -> [UInt8] {
        var line = JSONWriter.bytes(entry.json)
        line.append(0x0A)
        return line
    }

    public init(folder: String) {
        self.folder = folder
    }

    /// Appends one line, waiting at most `seconds` for another writer's lock (0: tries once).
    public func append(_ entry: AuditEntry, waitingAtMost seconds: Double = 5) throws(VaultError) {
        let line = AuditLog.line(entry)
        do {
            try SecureFile.ensurePrivateFolder(folder)
            let lock = try FileLock(path: "\(folder)/.audit.lock", waitingAtMost: seconds)
            defer { lock.release() }
            var st = stat()
            if lstat(path, &st) == 0, Int(st.st_size) > AuditLog.rotateAt {
                // The old generation is replaced only when it is a private file vaultctl made.
                _ = try SecureFile.privateFileExists("\(path).1")
                if rename(path, "\(path).1") != 0 { throw SlotError.io(path: path, errno: errno, operation: "rotate") }
            }
            try line.withTypedUnsafeBytes { (raw) throws(SlotError) in try SecureFile.append(path, raw) }
        } catch let e as SlotError {
            throw .slot(e)
        } catch let e as VaultError {
            throw e
        } catch {
            throw .configuration(path: path, detail: "\(error)")
        }
    }

    /// Refuses, before an audited command runs, an audit log that could not be written safely (others can
    /// read or write it, someone else owns it, it is a symlink) or whose lock another process holds for
    /// longer than `seconds`: a command that cannot leave its line does not run (75 for the lock, 78 for
    /// the file), so no change goes through unlogged behind a held `.audit.lock`.
    public func checkWritable(waitingAtMost seconds: Double = 5) throws(VaultError) {
        do {
            guard try SecureFile.privateFolderExists(folder) else { return }
            _ = try SecureFile.privateFileExists(path)
        } catch {
            throw .slot(error)
        }
        let lockPath = "\(folder)/.audit.lock"
        do throws(SlotError) { guard try SecureFile.privateFileExists(lockPath) else { return } } catch { throw .slot(error) }
        try FileLock(path: lockPath, waitingAtMost: seconds).release()
    }

    /// The newest `limit` entries, oldest first, from the log and, when it holds fewer, the generation
    /// before it (`audit.log.1`). Lines that do not parse are skipped.
    public func entries(limit: Int) throws(VaultError) -> [AuditEntry] {
        var out: [AuditEntry] = []
        do {
            guard try SecureFile.privateFolderExists(folder) else { return [] }
            for file in [path, "\(path).1"] where out.count < limit {
                guard let bytes = try SecureFile.readPublic(file, maximumCount: AuditLog.rotateAt * 2) else { continue }
                out = bytes.withUnsafeBytes { AuditLog.parse($0) } + out
            }
        } catch {
            throw .slot(error)
        }
        return Array(out.suffix(max(0, limit)))
    }

    /// The entries of lines of the log (as the file holds them, or as the gate sends them); a line that is
    /// not an entry is passed over.
    public static func parse(_ raw: UnsafeRawBufferPointer) -> [AuditEntry] {
        raw.split(separator: 0x0A).compactMap { line in
            try? AuditEntry(jsonBytes: UnsafeRawBufferPointer(rebasing: line))
        }
    }
}

extension AuditEntry {
    /// The entry as one line of the log, without its newline.
    public var jsonLine: String { String(decoding: JSONWriter.bytes(json), as: UTF8.self) }
}
