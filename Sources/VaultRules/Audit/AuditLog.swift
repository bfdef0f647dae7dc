#if canImport(Glibc)
import Glibc
#endif
import JSON
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
        try VaultError.inFile(path) {
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
    /// log's lock), keeping that file under `rotateAt` bytes: refusals and errors go first (a program can make
    /// those without a password), then the oldest failures, and a first line says how many went in all.
    private func keepFailures(of old: String, now: String) throws(SlotError) {
        guard let bytes = try SecureFile.readPublic(old, maximumCount: AuditLog.rotateAt * 2) else { return }
        let carried = Self.keptLines(bytes).filter { Self.keptResults.contains($0.entry.result) }
        guard !carried.isEmpty else { return }
        var lines = Self.keptLines((try SecureFile.readPublic(keptPath, maximumCount: AuditLog.rotateAt * 3)) ?? []) + carried
        // A note an earlier trim left: its count goes into the next one.
        var dropped = 0
        lines.removeAll { line in
            guard line.entry.result == "trimmed" else { return false }
            dropped += Int(line.entry.reason?.prefix { $0.isNumber } ?? "") ?? 0
            return true
        }
        var size = lines.reduce(0) { $0 + $1.bytes.count }
        for pass in ["refused-or-error", "failed"] where size > AuditLog.rotateAt {
            var kept: [(entry: AuditEntry, bytes: [UInt8])] = []
            for line in lines {
                let droppable = pass == "failed" || line.entry.result != "failed"
                if size > AuditLog.rotateAt && droppable {
                    size -= line.bytes.count
                    dropped += 1
                } else {
                    kept.append(line)
                }
            }
            lines = kept
        }
        var out: [UInt8] = []
        if dropped > 0 {
            // Stamped with the first kept line's time, so the file stays in time order.
            let note = AuditEntry(time: lines.first?.entry.time ?? now, command: "log", slot: nil, origin: "vaultctl", result: "trimmed",
                                  reason: "\(dropped) older lines of refusals and failures were dropped here (refusals first) to keep audit.kept under \(AuditLog.rotateAt / 1024) KiB")
            out = AuditLog.line(note)
        }
        for line in lines { out += line.bytes }
        try SecureFile.write(keptPath, out)
    }

    /// Each line of `bytes` that is an entry, with its bytes (newline included).
    private static func keptLines(_ bytes: [UInt8]) -> [(entry: AuditEntry, bytes: [UInt8])] {
        bytes.withUnsafeBytes { raw in
            raw.split(separator: 0x0A).compactMap { line -> (entry: AuditEntry, bytes: [UInt8])? in
                guard let e = try? AuditEntry(jsonBytes: UnsafeRawBufferPointer(rebasing: line)) else { return nil }
                return (e, Array(line) + [0x0A])
            }
        }
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
