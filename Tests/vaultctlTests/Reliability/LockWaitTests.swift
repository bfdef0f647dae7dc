#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Every wait for one of vaultctl's locks is bounded: a lock held by another process (a `store` stopped
/// with Ctrl-Z, `flock(1)`) makes a command give up with 75 naming the holder's PID, never hang; `lock`
/// never waits behind anything it can do without.
@Suite("locks: every wait is bounded", .tags(.needsServices))
struct LockWaitTests {
    /// `flock --no-fork -x PATH sleep 120` (so the holder is one process, `sleep` once it runs), started and
    /// holding the lock when this returns; killed on deinit.
    final class Holder {
        let process = Process()
        var pid: Int32 { process.processIdentifier }

        init(_ path: String, shared: Bool = false) throws {
            process.executableURL = URL(fileURLWithPath: Paths.tool("flock"))
            process.arguments = ["--no-fork", shared ? "-s" : "-x", path, "sleep", "120"]
            try process.run()
            // Held once our own non-blocking attempt is refused.
            for _ in 0..<500 {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd >= 0 {
                    let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                    close(fd)
                    if !free { return }
                }
                usleep(10_000)
            }
            throw SetupError(description: "flock did not take \(path)")
        }

        deinit {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// A sandbox with a device slot and a sync slot stored (allowed to be supplied), and every lock file made.
    static func prepared() throws -> (Sandbox, device: String, sync: String) {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("held-device")
        let sync = sb.uniqueSlot("held-sync")
        try sb.storeWithoutPAM(device, Array("device-value".utf8), mode: "device")
        try sb.storeWithoutPAM(sync, Array("sync-value".utf8), mode: "sync")
        #expect(try sb.vaultctl(["allow-supply", device, "on"]).status == 0)
        #expect(try sb.read(device).status == 0)
        return (sb, device, sync)
    }

    struct Case: Sendable, CustomStringConvertible {
        let lock: String
        let args: [String]
        /// The exit status wanted while the lock is held.
        let status: Int32
        /// How long it may take at most.
        let within: Duration
        var description: String { "\(lock): \(args.first ?? "")" }
    }

    /// Each lock held by `flock`, each command that needs it: 75 within its bound, naming the holder's PID and command; the
    /// secret never printed; `lock` done at once.
    @Test func aHeldLockIsTryLaterNamingItsHolderNeverAHang() throws {
        let (sb, device, sync) = try Self.prepared()
        let cases: [Case] = [
            Case(lock: "\(sb.stateFolder)/.changes.lock", args: ["store", device], status: 75, within: .seconds(25)),
            Case(lock: "\(sb.stateFolder)/.changes.lock", args: ["delete", sync], status: 75, within: .seconds(25)),
            Case(lock: "\(sb.stateFolder)/.changes.lock", args: ["lock"], status: 0, within: .seconds(3)),
            Case(lock: "\(sb.configFolder)/.modes.lock", args: ["store", device], status: 75, within: .seconds(12)),
            Case(lock: "\(sb.stateFolder)/.ratelimit.json.lock", args: ["read", device], status: 75, within: .seconds(12)),
            Case(lock: "\(sb.stateFolder)/.supply.json.lock", args: ["allow-supply", device, "off"], status: 75, within: .seconds(12)),
            Case(lock: "\(sb.stateFolder)/.audit.lock", args: ["lock"], status: 0, within: .seconds(3)),
        ]
        for c in cases {
            try Self.check(c, sb)
            if c.args == ["lock"] {
                #expect(try sb.vaultctl(["unlock"]).status == 0, "\(c)")
            }
        }
        // Nothing was lost: both values are still there.
        #expect(try sb.read(device).stdoutText == "device-value")
        #expect(try sb.read(sync).stdoutText == "sync-value")
    }

    /// One case, with its lock held for the length of the call (released on return).
    static func check(_ c: Case, _ sb: Sandbox) throws {
            let holder = try Holder(c.lock)
            // `lock` also locks the Secret Service collection: never the shared keyring's.
            let noBus = c.args == ["lock"] ? ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"] : [:]
            let r = try sb.vaultctl(c.args, stdin: .text("new-value"), overriding: noBus, timeout: .seconds(40))
            #expect(!r.timedOut && r.elapsed < c.within, "\(c): took \(r.elapsed)")
            #expect(r.status == c.status, "\(c): \(r)")
            #expect(!r.stdoutText.contains("-value"), "\(c): no secret while a lock is held")
            if c.status == 75 {
                #expect(r.stderr.contains("PID \(holder.pid), 'sleep'"), "\(c): names the holder: \(r.stderr)")
                #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(c): one line: \(r.stderr)")
            }
            if c.args == ["lock"] && c.lock.hasSuffix("/.audit.lock") {
                // Unlocking is a change: while its audit line cannot be written, it is refused.
                let unlock = try sb.vaultctl(["unlock"], timeout: .seconds(40))
                #expect(unlock.status == 75 && unlock.stderr.contains("PID \(holder.pid)"), "\(c): \(unlock)")
            }
    }
}
