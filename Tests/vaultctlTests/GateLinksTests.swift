#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The gate holds only what it runs (issue 34, point 1): `scripts/check-gate-links.sh` finds no symbol of the
/// Secret Service module, the KeePassXC connector, sd-bus or libgcrypt in the built gate, and does find them in
/// the CLI (so the check can fail). `make test` runs the same script before the suites.
@Suite struct GateLinksTests {
    static var script: String { "\(Paths.repositoryRoot)/scripts/check-gate-links.sh" }

    @Test func theGateLinksNoSecretServiceCode() throws {
        let gate = Paths.folder(of: Paths.vaultctl) + "/vaultctl-gate"
        let r = ProcessRunner.run(Self.script, [gate], environment: Fixtures.baseEnvironment)
        #expect(r.status == 0 && r.stdoutText.hasPrefix("vaultctl-gate: no code of SecretService"), "\(r)")
    }

    @Test func theCheckFindsItInTheCLI() throws {
        let r = ProcessRunner.run(Self.script, [Paths.vaultctl], environment: Fixtures.baseEnvironment)
        #expect(r.status == 1 && r.stderr.contains("SecretService") && r.stderr.contains("links code it must not run"), "\(r)")
    }
}
