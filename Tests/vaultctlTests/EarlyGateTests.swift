import Testing
@testable import vaultctl

/// Which command lines start the installed gate before their words are parsed (`EarlyGate`, the C
/// constructor's table in Sources/CStartHardening/early_gate.c): the same command `CommandTable` finds, only
/// one that looks at the vault, and the `--authenticating` hint for exactly those that authenticate as a rule.
@Suite struct EarlyGateTests {
    @Test func theCommandIsNamedByItsFirstWordsAsTheTableNamesIt() {
        #expect(EarlyGate.command(["vaultctl", "read", "mail"]) == .read)
        #expect(EarlyGate.command(["/usr/bin/vaultctl", "status", "mail", "--json"]) == .status)
        #expect(EarlyGate.command(["vaultctl", "recovery", "show"]) == .recoveryShow)
        #expect(EarlyGate.command(["vaultctl", "device-key", "protect", "--password-stdin"]) == .deviceKeyProtect)
        #expect(EarlyGate.command(["vaultctl", "read", "--", "--help"]) == .read)  // a slot named --help
        for kind in CommandKind.allCases {
            let words = ["vaultctl"] + kind.rawValue.split(separator: " ").map(String.init)
            #expect((EarlyGate.command(words) != nil) == kind.looksAtVault, "\(kind)")
            #expect(EarlyGate.command(words).map { CommandTable.match(Array(words.dropFirst()))?.0.kind == $0 } ?? true, "\(kind)")
            // The constructor's own table gives the hint to exactly the commands that authenticate as a rule.
            #expect(EarlyGate.hintsAuthentication(words + ["slot"]) == (kind.looksAtVault && kind.authenticatesAsARule), "\(kind)")
        }
    }

    @Test func helpVersionUnknownWordsAndGitsHelperNameStartNothing() {
        #expect(EarlyGate.command(["vaultctl"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "read", "--help"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "read", "mail", "-h"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "--version"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "help", "read"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "completion", "bash"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "recovery"]) == nil)
        #expect(EarlyGate.command(["vaultctl", "reed", "mail"]) == nil)
        #expect(EarlyGate.command(["/usr/lib/git-core/git-credential-vaultctl", "get"]) == nil)
    }
}
