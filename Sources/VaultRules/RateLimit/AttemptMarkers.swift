#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The places of attempts in progress: one small file per attempt, `<state>/attempts/<pid>.<start time>`, created when
/// the attempt takes its place, holding `answered` once its password was handed to PAM, removed when it ends.
///
/// A marker is created once and never replaced, so taking and giving back a place rewrites no shared file:
/// replacing `ratelimit.json` three times per read (ext4 flushes a file that is renamed over another) was the
/// largest cost of a gated read. Each marker is written only by its own process; others read it only to
/// settle the place of a process that is gone (under the rate limit's lock). Nothing is flushed to disk: a
/// power cut ends the processes they describe, too.
package struct AttemptMarkers: Sendable {
    package let folder: String
    package static let answeredText: [UInt8] = Array("answered\n".utf8)
    /// What a marker holds until its password is handed over: as long as `answeredText`, so marking it
    /// answered rewrites bytes already on disk and cannot fail for want of room (a full disk, a caller's
    /// RLIMIT_FSIZE); a place that cannot hold these bytes is never taken, so no prompt follows it.
    package static let askingText: [UInt8] = Array("asking  \n".utf8)

    /// One place: its process (pid and, when known, the kernel's start time of it, so that a later process
    /// with the same pid is not taken for it), and whether its password had been handed over.
    package struct Marker: Equatable, Sendable {
        let pid: Int32
        let startTime: UInt64?
        var answered = false

        var name: String { startTime.map { "\(pid).\($0)" } ?? "\(pid)" }

        /// `PID` or `PID.STARTTIME`; nil for any other name.
        init?(name: String) {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let pid = Int32(parts[0]), pid > 0, String(pid) == parts[0] else { return nil }
            var start: UInt64?
            if parts.count == 2 {
                guard let s = UInt64(parts[1]), String(s) == parts[1] else { return nil }
                start = s
            }
            self.pid = pid
            self.startTime = start
        }

        init(pid: Int32, startTime: UInt64?) {
            self.pid = pid
            self.startTime = startTime
        }
    }

    package func path(_ marker: Marker) -> String { "\(folder)/\(marker.name)" }

    /// The marker `pid` makes for itself. Only this process's start time is known (tests pass made-up pids,
    /// whose markers are named by the pid alone).
    package func own(_ pid: Int32) -> Marker {
        Marker(pid: pid, startTime: pid == getpid() ? Self.ownStartTime : nil)
    }

    /// This process's start time, read once (every place it takes is named with it).
    private static let ownStartTime = startTime(of: getpid())

    /// The kernel's start time of process `pid` (field 22 of `/proc/PID/stat`, in clock ticks since boot);
    /// nil when it cannot be read.
    package static func startTime(of pid: Int32) -> UInt64? { processStat(of: pid)?.startTime }

    /// The state letter (field 3) and start time (field 22) of `/proc/PID/stat`.
    package static func processStat(of pid: Int32) -> (state: UInt8, startTime: UInt64)? {
        guard let stat = ProcFile.read("/proc/\(pid)/stat", limit: 4096),
              let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19, let state = fields[0].first,
              let start = UInt64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
        return (state, start)
    }

    /// Every marker. One that cannot be read safely counts as answered (a place must never be cheaper to
    /// abandon than to lose). An entry with a marker's name that is not a regular file (a folder, a
    /// symlink) was not made by vaultctl and could never be removed: it is refused, naming it, instead of
    /// being counted as a failure again by every command that settles it.
    package func all() throws(SlotError) -> [Marker] {
        guard try SecureFile.privateFolderExists(folder) else { return [] }
        var markers: [Marker] = []
        for name in try SecureFile.entries(of: folder) {
            guard var marker = Marker(name: name) else { continue }
            var st = stat()
            if lstat(path(marker), &st) == 0 && st.st_mode & S_IFMT != S_IFREG {
                throw .unsafePermissions(path: path(marker), detail: "it is not an attempt marker vaultctl made (not a regular file); remove it")
            }
            do throws(SlotError) {
                // Gone meanwhile: its process gave the place back.
                guard let text = try SecureFile.readPublic(path(marker), maximumCount: 64) else { continue }
                marker.answered = text == Self.answeredText
            } catch {
                marker.answered = true
            }
            markers.append(marker)
        }
        return markers
    }

    /// Takes the place of `pid`.
    package func create(_ pid: Int32) throws(SlotError) {
        try SecureFile.ensurePrivateFolder(folder)
        let p = path(own(pid))
        let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: p, errno: errno, operation: "create the attempt marker") }
        defer { close(fd) }
        let n = Self.askingText.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == Self.askingText.count else {
            let e = n < 0 ? errno : ENOSPC
            _ = unlink(p)
            throw .io(path: p, errno: e, operation: "write the attempt marker")
        }
    }

    /// Notes that `pid` handed its password over.
    package func markAnswered(_ pid: Int32) throws(SlotError) { try rewrite(pid, Self.answeredText) }

    /// Notes that `pid`'s attempt is, after all, no guess (marked answered in advance, and nothing was given).
    package func markAsking(_ pid: Int32) throws(SlotError) { try rewrite(pid, Self.askingText) }

    /// Writes `text` over the marker's bytes (the same length: it cannot fail for want of room).
    private func rewrite(_ pid: Int32, _ text: [UInt8]) throws(SlotError) {
        let p = path(own(pid))
        let fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: p, errno: errno, operation: "open the attempt marker") }
        defer { close(fd) }
        let n = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == text.count else { throw .io(path: p, errno: errno, operation: "write the attempt marker") }
    }

    /// Removes a marker (none is fine: nothing to give back).
    package func remove(_ marker: Marker) throws(SlotError) {
        if unlink(path(marker)) != 0 && errno != ENOENT {
            throw .io(path: path(marker), errno: errno, operation: "remove the attempt marker")
        }
    }
}
