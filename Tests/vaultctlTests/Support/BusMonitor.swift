#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `dbus-monitor` watching a private bus, writing what it sees to a file (`--pcap` or `--profile`), until
/// stopped. What crosses the bus during a command, in the order the bus saw it.
final class BusMonitor {
    let log: String
    private let pid: pid_t
    private let environment: [String: String]

    /// Starts the monitor on `keyring`'s bus and waits until it watches. `format`: dbus-monitor's option.
    init(_ keyring: SecretServiceInstance, writingTo log: String, format: String,
         sourceLocation: SourceLocation = #_sourceLocation) throws {
        self.log = log
        environment = keyring.clientEnvironment
        // In the background (it runs until killed); its pid comes back on stdout.
        let started = ProcessRunner.run("/bin/sh", ["-c", "\"$0\" --address \"$1\" \"$2\" >\"$3\" 2>/dev/null & echo $!",
                                                    Paths.tool("dbus-monitor"), keyring.busAddress, format, log],
                                        environment: environment, timeout: .seconds(10))
        pid = try #require(pid_t(started.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "\(started)",
                           sourceLocation: sourceLocation)
        // A connection that becomes a monitor loses its names: that NameLost is the first thing it records.
        guard waitUntilLogged("NameLost") else {
            throw SetupError(description: "dbus-monitor did not start watching")  // deinit kills it
        }
    }

    /// Set once the monitor was told to stop: its pid, reaped by then, may be another process's.
    private var stopped = false

    deinit { if !stopped { kill(pid, SIGKILL) } }

    /// Makes one more call on the bus (the bus's own `member`, e.g. `ListNames`) and waits until the monitor
    /// wrote it: then it has written every message before it. Then stops the monitor.
    func catchUpAndStop(after member: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let sentinel = ProcessRunner.run(Paths.tool("gdbus"), ["call", "--session", "--dest", "org.freedesktop.DBus",
                                                               "--object-path", "/org/freedesktop/DBus",
                                                               "--method", "org.freedesktop.DBus.\(member)"],
                                         environment: environment, timeout: .seconds(10))
        try #require(sentinel.status == 0, "\(sentinel)", sourceLocation: sourceLocation)
        try #require(waitUntilLogged(member), "the monitor did not catch up with the bus", sourceLocation: sourceLocation)
        kill(pid, SIGTERM)
        stopped = true
    }

    /// What the monitor wrote so far.
    var bytes: [UInt8] { FileManager.default.contents(atPath: log).map { [UInt8]($0) } ?? [] }

    /// Whether `text` appears in the log within 10 s.
    func waitUntilLogged(_ text: String) -> Bool {
        for _ in 0..<500 {
            if Self.contains(bytes, Array(text.utf8)) { return true }
            usleep(20_000)
        }
        return false
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
