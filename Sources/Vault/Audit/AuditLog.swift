#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The append-only audit log: `<state>/audit.log`, one JSON object per line (compact, sorted keys), 0600,
/// appended under `flock`.
/// Past 1 MiB it is rotated to `audit.log.1` (one generation kept; `entries` reads both). The failures and
/// refusals of the generation a rotation drops are carried to `audit.kept` first, so that lines that need no
/// password (a store of a new slot, a `lock`), however many, never push a failure out of the log; that file
/// keeps its newest 1 MiB and says, in a line of its own, how many older lines it dropped.
public struct AuditLog: Sendable {
    public let folder: String
    public static let rotateAt = 1024 * 1024
    public var path: String { "\(folder)/audit.log" }
    var keptPath: String { "\(folder)/audit.kept" }
    /// The results whose lines a rotation carries to `audit.kept`.
    static let keptResults: Set<String> = ["failed", "refused", "error"]

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
                // The old generation is replaced only when it is a private file vaultctl made, and only once its
                // failures and refusals are kept (a kill in between keeps them twice at worst, never not at all).
                if try SecureFile.privateFileExists("\(path).1") { try keepFailures(of: "\(path).1", now: entry.time) }
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

    /// Carries the failures and refusals of the generation about to be dropped to `audit.kept` (under the
    /// log's lock), trimming that file to its newest `rotateAt` bytes with a line that says how many it dropped.
    private func keepFailures(of old: String, now: String) throws(SlotError) {
        guard let bytes = try SecureFile.readPublic(old, maximumCount: AuditLog.rotateAt * 2) else { return }
        var carried: [UInt8] = []
        bytes.withUnsafeBytes { raw in
            for line in raw.split(separator: 0x0A) {
                guard let e = try? AuditEntry(jsonBytes: UnsafeRawBufferPointer(rebasing: line)), Self.keptResults.contains(e.result) else { continue }
                carried += line
                carried.append(0x0A)
            }
        }
        guard !carried.isEmpty else { return }
        let kept = (try SecureFile.readPublic(keptPath, maximumCount: AuditLog.rotateAt * 3)) ?? []
        var all = kept + carried
        if all.count > AuditLog.rotateAt {
            // The newest whole lines that fit, after a line saying how many went.
            var start = all.count - AuditLog.rotateAt
            while start < all.count && all[start - 1] != 0x0A { start += 1 }
            let dropped = all[..<start].reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
            let note = AuditEntry(time: now, command: "log", slot: nil, origin: "vaultctl", result: "trimmed",
                                  reason: "\(dropped) older lines of failures and refusals were dropped here to keep audit.kept under \(AuditLog.rotateAt / 1024) KiB")
            all = AuditLog.line(note) + Array(all[start...])
        }
        try SecureFile.write(keptPath, all)
    }

    /// The newest `limit` entries, oldest first, from the log and, when it holds fewer, the generation
    /// before it (`audit.log.1`) and the failures and refusals kept from older ones (`audit.kept`), after
    /// leaving out the newest `skip`. Lines that do not parse are skipped.
    public func entries(limit: Int, skip: Int = 0) throws(VaultError) -> [AuditEntry] {
        var out: [AuditEntry] = []
        do {
            guard try SecureFile.privateFolderExists(folder) else { return [] }
            for file in [path, "\(path).1", keptPath] where out.count < limit + skip {
                guard let bytes = try SecureFile.readPublic(file, maximumCount: AuditLog.rotateAt * 2) else { continue }
                out = bytes.withUnsafeBytes { AuditLog.parse($0) } + out
            }
        } catch {
            throw .slot(error)
        }
        return Array(out.dropLast(max(0, skip)).suffix(max(0, limit)))
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
