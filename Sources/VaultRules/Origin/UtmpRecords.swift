#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The login records in utmp (`/var/run/utmp`, written by root: sshd, login, terminal emulators).
enum UtmpRecords {
    struct Record: Equatable, Sendable {
        var line: String
        var host: String
        var pid: Int32
    }

    /// `getutxent` walks one process-wide cursor; this keeps two of our own walks from interleaving.
    private static let cursor = Mutex(())

    /// The `USER_PROCESS` records, at most `limit`. Empty when there is no utmp (containers, some
    /// distributions that dropped it for logind).
    ///
    /// The corresponding C functions are `setutxent`, `getutxent` and `endutxent`.
    static func userProcesses(limit: Int = 4096) -> [Record] {
        cursor.withLock { _ in
            setutxent()
            defer { endutxent() }
            var records: [Record] = []
            var seen = 0
            while seen < limit * 4, records.count < limit, let entry = getutxent() {
                seen += 1
                if let record = record(entry.pointee) { records.append(record) }
            }
            return records
        }
    }

    /// A `USER_PROCESS` record's line, host and pid; the fixed-size C arrays are read up to their first
    /// NUL or their end, whichever comes first (a full `ut_host` has no NUL).
    static func record(_ e: utmpx) -> Record? {
        guard Int32(e.ut_type) == USER_PROCESS else { return nil }
        let line = withUnsafeBytes(of: e.ut_line) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        let host = withUnsafeBytes(of: e.ut_host) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return Record(line: line, host: host, pid: e.ut_pid)
    }

    /// The host of the record for terminal `line`. Should stale records share the line, one made by a
    /// process in `preferredPIDs` (our ancestors) wins, then the last one.
    static func host(forLine line: String, preferring preferredPIDs: Set<Int32>, in records: [Record]) -> String? {
        let matching = records.filter { $0.line == line }
        return (matching.last { preferredPIDs.contains($0.pid) } ?? matching.last)?.host
    }
}
