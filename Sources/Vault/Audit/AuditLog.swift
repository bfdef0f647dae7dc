#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Slots

/// One line of the audit log. Never the secret, never its length.
public struct AuditEntry: Codable, Sendable, Equatable {
    public var time: String
    public var command: String
    public var slot: String?
    public var origin: String
    /// "ok", "refused" (a check said no before any prompt), "failed" (authentication or delivery failed),
    /// or "error" (anything else).
    public var result: String
    public var reason: String?

    public init(time: String, command: String, slot: String?, origin: String, result: String, reason: String?) {
        self.time = time
        self.command = command
        self.slot = slot
        self.origin = origin
        self.result = result
        self.reason = reason
    }
}

/// The append-only audit log: `<state>/audit.log`, one JSON object per line, 0600, appended under `flock`.
/// Past 1 MiB it is rotated to `audit.log.1` (one generation kept).
public struct AuditLog: Sendable {
    public let folder: String
    public static let rotateAt = 1024 * 1024
    var path: String { "\(folder)/audit.log" }

    public init(folder: String) {
        self.folder = folder
    }

    public func append(_ entry: AuditEntry) throws(VaultError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(entry) else { return }
        line.append(0x0A)
        do {
            try SecureFile.ensurePrivateFolder(folder)
            let lock = try FileLock(path: "\(folder)/.audit.lock")
            defer { lock.release() }
            var st = stat()
            if lstat(path, &st) == 0, Int(st.st_size) > AuditLog.rotateAt {
                if rename(path, "\(path).1") != 0 { throw SlotError.io(path: path, errno: errno, operation: "rotate") }
            }
            let bytes = SecretBytes(capacity: line.count)
            line.withUnsafeBytes { _ = bytes.append($0) }
            try bytes.withUnsafeBytes { (raw) throws(SlotError) in try SecureFile.append(path, raw) }
        } catch let e as SlotError {
            throw .slot(e)
        } catch {
            throw .configuration(path: path, detail: "\(error)")
        }
    }

    /// Refuses, before a gated command runs, an audit log that could not be written safely (others can
    /// read or write it, someone else owns it, it is a symlink): a gated command that cannot leave its line
    /// does not run.
    public func checkWritable() throws(VaultError) {
        do {
            guard try SecureFile.privateFolderExists(folder) else { return }
            _ = try SecureFile.privateFileExists(path)
        } catch {
            throw .slot(error)
        }
    }

    /// The newest `limit` entries, oldest first. Lines that do not parse are skipped.
    public func entries(limit: Int) throws(VaultError) -> [AuditEntry] {
        let bytes: SecretBytes?
        do {
            guard try SecureFile.privateFolderExists(folder) else { return [] }
            bytes = try SecureFile.read(path, maximumCount: AuditLog.rotateAt * 2)
        } catch {
            throw .slot(error)
        }
        guard let bytes else { return [] }
        let data = bytes.withUnsafeBytes { Data($0) }
        let decoder = JSONDecoder()
        var out: [AuditEntry] = []
        for line in data.split(separator: 0x0A) {
            if let e = try? decoder.decode(AuditEntry.self, from: Data(line)) { out.append(e) }
        }
        return Array(out.suffix(max(0, limit)))
    }
}
