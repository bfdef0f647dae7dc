#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// A `delete` killed at a chosen system call (with strace's fault injection) after a `store` that could not
/// remove the old copy: the delete must never bring the older, overwritten value back.
@Suite("delete: interrupted after an interrupted store", .tags(.needsServices))
struct InterruptedDeleteTests {
    /// The state a `store` leaves when it is cut short after writing the new value and the record, before
    /// removing the old copy (reads correctly ignore that copy): made here by a device store while the
    /// bus is unreachable, so the sync copy cannot be removed.
    static func newInDeviceOldInSync(_ sb: Sandbox, _ name: String) throws {
        try sb.store(name, Array("OLD-value".utf8), mode: "sync")
        let s = try sb.vaultctl(["store", name], stdin: .text("NEW-value"),
                                overriding: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        try #require(s.status == 0, "\(s)")
        try #require(sb.keyringValue(name) == Array("OLD-value".utf8), "the old copy is still in the keyring")
        let r = try sb.readReliably(name)
        try #require(r.status == 0 && r.stdoutText == "NEW-value", "reads see the new value: \(r)")
    }

    /// Killed at its first fsync: on main that was right after the device copy was unlinked, which made the
    /// older sync copy the value.
    @Test func deleteKilledAfterItsFirstRemovalNeverBringsBackTheOlderValue() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("interrupted-delete")
        try Self.newInDeviceOldInSync(sb, name)

        let d = try sb.vaultctl(["delete", name], askpass: .unset,
                                prefix: [Paths.tool("strace"), "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync",
                                         "-e", "inject=fsync:signal=KILL:when=1"])
        #expect(d.status == 128 + SIGKILL, "the delete was killed at its first fsync: \(d)")

        let r = try sb.readReliably(name)
        #expect(r.stdoutText != "OLD-value", "the overwritten value came back: \(r)")
        #expect(r.status == 66 || (r.status == 0 && r.stdoutText == "NEW-value"), "\(r)")
        // A delete that runs to the end removes whatever is left.
        let again = try sb.vaultctl(["delete", name])
        #expect(again.status == 0 || again.status == 66, "\(again)")
        #expect(try sb.readReliably(name).status == 66)
        #expect(sb.keyringValue(name).isEmpty && sb.deviceFileSize(name) == nil)
    }

    /// A store to sync cut short before it wrote the record: the new value is in the keyring, the record
    /// still names the device slot, so reads see the device copy. The keyring copy, which reads do not
    /// see, goes first.
    @Test func deleteKilledAfterItsFirstRemovalKeepsTheSyncValueReadsSee() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("interrupted-delete-sync")
        try sb.store(name, Array("OLD-value".utf8), mode: "device")
        // A sync store killed at its first fsync (the record's write, after the keyring item was written).
        let s = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("NEW-value"),
                                prefix: [Paths.tool("strace"), "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync",
                                         "-e", "inject=fsync:signal=KILL:when=1"])
        try #require(s.status == 128 + SIGKILL, "\(s)")
        try #require(sb.keyringValue(name) == Array("NEW-value".utf8) && sb.deviceFileSize(name) != nil)
        let current = try sb.readReliably(name)
        try #require(current.status == 0, "\(current)")

        let d = try sb.vaultctl(["delete", name], askpass: .unset,
                                prefix: [Paths.tool("strace"), "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync",
                                         "-e", "inject=fsync:signal=KILL:when=1"])
        #expect(d.status == 128 + SIGKILL, "\(d)")
        let r = try sb.readReliably(name)
        #expect(r.status == 66 || (r.status == 0 && r.stdout == current.stdout),
                "after the cut-short delete a read gives what it gave before (\(current.stdoutText)) or nothing: \(r)")
    }
}
