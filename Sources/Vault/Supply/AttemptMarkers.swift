#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The places of attempts in progress: one empty file per attempt, `<state>/attempts/<pid>`, created when
/// the attempt takes its place, holding `answered` once its password was handed to PAM, removed when it ends.
///
/// A marker is created once and never replaced, so taking and giving back a place rewrites no shared file:
/// replacing `ratelimit.json` three times per read (ext4 flushes a file that is renamed over another) was the
/// largest cost of a gated read. Each marker is written only by its own process; others read it only to
/// settle the place of a process that is gone (under the rate limit's lock). Nothing is flushed to disk: a
/// power cut ends the processes they describe, too.
struct AttemptMarkers: Sendable {
    let folder: String
    static let answeredText: [UInt8] = Array("answered\n".utf8)

    func path(_ pid: Int32) -> String { "\(folder)/\(pid)" }

    /// Every marker: its process and whether it had handed its password over. A marker that cannot be read
    /// safely counts as answered (a place must never be cheaper to abandon than to lose).
    func all() throws(SlotError) -> [(pid: Int32, answered: Bool)] {
        guard try SecureFile.privateFolderExists(folder) else { return [] }
        return try SecureFile.entries(of: folder).compactMap { (name) -> (pid: Int32, answered: Bool)? in
            guard let pid = Int32(name), pid > 0, String(pid) == name else { return nil }
            let answered: Bool
            do throws(SlotError) {
                // Gone meanwhile: its process gave the place back.
                answered = try SecureFile.readPublic(path(pid), maximumCount: 64).map { $0 == Self.answeredText } ?? false
            } catch {
                answered = true
            }
            return (pid, answered)
        }
    }

    /// Takes the place of `pid`.
    func create(_ pid: Int32) throws(SlotError) {
        try SecureFile.ensurePrivateFolder(folder)
        let fd = open(path(pid), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path(pid), errno: errno, operation: "create the attempt marker") }
        close(fd)
    }

    /// Notes that `pid` handed its password over.
    func markAnswered(_ pid: Int32) throws(SlotError) {
        let fd = open(path(pid), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path(pid), errno: errno, operation: "open the attempt marker") }
        defer { close(fd) }
        let n = Self.answeredText.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == Self.answeredText.count else { throw .io(path: path(pid), errno: errno, operation: "write the attempt marker") }
    }

    /// Gives the place of `pid` back (no marker is fine: nothing to give back).
    func remove(_ pid: Int32) throws(SlotError) {
        if unlink(path(pid)) != 0 && errno != ENOENT {
            throw .io(path: path(pid), errno: errno, operation: "remove the attempt marker")
        }
    }
}
