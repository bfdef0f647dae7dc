import Foundation
import Testing
import TestSupport

/// A provider that names its clients by the executable of the connection's process (KeePassXC, which warns
/// "invalid executable path" about a process it cannot read) sees vaultctl's own program, through the
/// connector that connected vaultctl's socket (BusConnector), while vaultctl itself stays unreadable to it
/// (not dumpable); the connection carries the real key exchange and value. Another provider gets no connector.
@Suite(.tags(.needsRoot, .needsServices)) struct ProviderSeesVaultctlTests {
    /// Both sides as a provider and a client running as the user are: without capabilities (root's
    /// CAP_SYS_PTRACE reads any process's /proc/PID/exe, and a process without capabilities cannot read one
    /// with more).
    static let withoutCapabilities = [Paths.tool("setpriv"), "--bounding-set=-all", "--inh-caps=-all", "--"]

    @Test func aProviderThatNamesItsClientsSeesVaultctlsProgramButCannotReadVaultctl() throws {
        let provider = try SecretServiceInstance.start(.scriptedNamesClients)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let name = sb.uniqueSlot("named")
        let status = try sb.vaultctl(["status", name], prefix: Self.withoutCapabilities)
        #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
        let read = try sb.vaultctl(["read", name], prefix: Self.withoutCapabilities)
        #expect(read.status == 0 && read.stdoutText == "allowed-secret", "\(read)")
        let program = try #require(realpath(Paths.vaultctl, nil).map { p in defer { free(p) }; return String(cString: p) })
        let seen = provider.providerEvents.filter { $0.hasPrefix("client ") || $0.hasPrefix("parent ") }
        // What the provider can read of the connector while it is dumpable: its channel to vaultctl and
        // /dev/null, no bus socket, no pipe to anything.
        let connector = ["client \(program)", "client holds 0=socket 1=/dev/null 2=/dev/null", "parent unreadable: Permission denied"]
        // One connector per vaultctl run: two commands, or more when the harness ran one again because
        // pam_wrapper (the test tool) could not start PAM under load (ProcessRunner), which made CI red once.
        let runs = seen.count / connector.count
        #expect(runs >= 2 && seen == Array(repeating: connector, count: runs).flatMap { $0 }, "\(seen)")
    }

    /// gnome-keyring (and any provider not known to name its clients) is talked to on vaultctl's own
    /// connection: no second program starts.
    @Test func anotherProviderGetsNoConnector() throws {
        let provider = try SecretServiceInstance.start(.scriptedProvider)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let trace = sb.root + "/exec.trace"
        let status = try sb.vaultctl(["status", sb.uniqueSlot("direct")], prefix: [Paths.tool("strace"), "-f", "-o", trace, "-e", "trace=execve", "--"])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
        let execs = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n").filter { $0.contains("execve(") && !$0.contains("resumed") }
        #expect(execs.count == 1 && !execs.contains { $0.contains("--connect-session-bus") }, "\(execs)")
    }
}
