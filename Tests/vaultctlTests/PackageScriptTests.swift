#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The package's maintainer scripts, run as dpkg runs them (`postinst configure VERSION`, as root) on a
/// machine of their own (`GateMachine`: overlays of `/etc` and `/var/lib` in a mount namespace). What they
/// refuse or warn about comes with the exact command that fixes it, and that command does (issue 36, 11).
@Suite(.serialized, .enabled(if: GateMachine.canRun, "needs root: a mount namespace, users and a set-group-ID file"), .tags(.needsRoot))
final class PackageScriptTests {
    static let shared = Result { try GateMachine.start() }
    let m: GateMachine

    init() throws {
        m = try Self.shared.get()
        m.reset()
        m.asRoot("chown root:vaultctl /var/lib/vaultctl && chmod 0770 /var/lib/vaultctl; gpasswd -d alice vaultctl >/dev/null 2>&1; true")
    }

    /// `postinst configure` of an upgrade (the gate's statoverride is left as it is then).
    func postinst() -> ProcessResult {
        m.asRoot("sh \(Paths.repositoryRoot)/debian/vaultctl.postinst configure 0.1.0-1")
    }

    /// The command a message gives after "fix it as root with: ", to the end of its line.
    func fix(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let line = try #require(stderr.split(separator: "\n").first { $0.contains("fix it as root with: ") },
                                "no command in \(stderr.debugDescription)", sourceLocation: sourceLocation)
        return String(line[line.range(of: "fix it as root with: ")!.upperBound...])
    }

    @Test func aStoreWithTheWrongGroupIsReportedWithTheCommandThatFixesIt() throws {
        try #require(postinst().status == 0)
        m.asRoot("chgrp root /var/lib/vaultctl && chmod 0755 /var/lib/vaultctl")
        let r = postinst()
        #expect(r.status == 0, "a warning, not a failure: \(r)")
        #expect(r.stderr.contains("/var/lib/vaultctl is root:root 755, not root:vaultctl 770"), "\(r.stderr)")
        let command = try fix(r.stderr)
        #expect(command == "chown root:vaultctl /var/lib/vaultctl && chmod 0770 /var/lib/vaultctl")
        #expect(m.asRoot(command).status == 0)
        let again = postinst()
        #expect(again.status == 0 && !again.stderr.contains("warning"), "\(again)")
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0, "the gate takes the store again")
    }

    @Test func aGroupWithAMemberIsRefusedWithTheCommandThatFixesIt() throws {
        try #require(m.asRoot("gpasswd -a alice vaultctl").status == 0)
        let r = postinst()
        #expect(r.status == 1, "\(r)")
        let command = try fix(r.stderr)
        #expect(command == "gpasswd -d alice vaultctl && dpkg --configure vaultctl", "\(command)")
        // The package is not installed in this machine, so dpkg --configure is postinst run again.
        let withoutDpkg = command.replacingOccurrences(of: " && dpkg --configure vaultctl", with: "")
        #expect(m.asRoot(withoutDpkg).status == 0)
        let again = postinst()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    @Test func aGroupWithAUserGIDIsRefusedWithTheCommandThatFixesIt() throws {
        let gid = m.asRoot("getent group vaultctl | cut -d: -f3").stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { m.asRoot("groupmod -g \(gid) vaultctl && chgrp -R vaultctl /var/lib/vaultctl") }
        try #require(m.asRoot("groupmod -g 1500 vaultctl").status == 0)
        let r = postinst()
        #expect(r.status == 1, "\(r)")
        let command = try fix(r.stderr)
        #expect(command.range(of: #"^groupmod -g [1-9][0-9]{2} vaultctl && chgrp -R vaultctl /var/lib/vaultctl && dpkg --configure vaultctl$"#,
                              options: .regularExpression) != nil, "\(command)")
        let withoutDpkg = command.replacingOccurrences(of: " && dpkg --configure vaultctl", with: "")
        #expect(m.asRoot(withoutDpkg).status == 0)
        let again = postinst()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }
}
