import Foundation
import Testing
@testable import vaultctl

/// Which commands take `--password-stdin`, decided once per `CommandKind`.
@Suite("--password-stdin in the command table")
struct PasswordStdinOptionTests {
    @Test(arguments: CommandKind.allCases)
    func exactlyTheCommandsThatMayAskPAMTakeIt(_ kind: CommandKind) throws {
        let command = try #require(CommandTable.all.first { $0.kind == kind })
        let takes = command.options.contains { $0.name == CommandTable.passwordStdinOption.name }
        #expect(takes == kind.mayAskPAM, "\(kind.rawValue)")
        #expect(command.synopsis.contains("--password-stdin") == kind.mayAskPAM, "the synopsis says so: \(command.synopsis)")
    }
}

/// `--password-stdin`: PAM is answered from standard input, one line per question, through the real PAM
/// stack. It is still a fresh authentication on every run, counted by the rate limit like any other.
@Suite("--password-stdin")
struct PasswordStdinTests {
    static let rightLine = Stdin.text("\(Fixtures.pamPassword)\n")
    static let wrongLine = Stdin.text("\(Fixtures.wrongPassword)\n")

    @Test func readTakesThePasswordFromStandardInputAndNeverRunsAskpass() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-stdin")
        let secret = TestData.binarySecret(name)
        try sb.store(name, secret)

        // VAULT_ASKPASS is set to a program that would give a wrong password: the option wins over it.
        let r = try sb.vaultctlCounted(["read", name, "--password-stdin"], password: .wrong, stdin: Self.rightLine)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret)
        #expect(sb.askpassCalls == 0, "the askpass program is not asked")
        #expect(!r.stderr.contains("Password"), "no prompt is shown on a pipe: \(r.stderr)")
    }

    @Test func aLastLineWithoutANewlineIsTheAnswer() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-no-nl")
        try sb.store(name, TestData.textSecret(name))

        let r = try Sandbox.repeatingPAMWrapperRaces {
            try sb.vaultctl(["read", name, "--password-stdin"], stdin: .text(Fixtures.pamPassword), askpass: .unset)
        }
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == TestData.textSecret(name))
    }

    @Test func aWrongPasswordIs77AndCountsAsAFailure() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-wrong")
        try sb.store(name, TestData.textSecret(name))

        for attempt in 1...3 {
            let r = try Sandbox.repeatingPAMWrapperRaces {
                try sb.vaultctl(["read", name, "--password-stdin"], stdin: Self.wrongLine, askpass: .unset)
            }
            #expect(r.status == 77, "attempt \(attempt): \(r)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("Authentication failed"), "\(r.stderr)")
        }
        // Three failures block the next gated command, whichever way its password would come.
        let blocked = try sb.vaultctl(["read", name, "--password-stdin"], stdin: Self.rightLine, askpass: .unset)
        #expect(blocked.status == 75, "\(blocked)")
        #expect(blocked.stdout.isEmpty)
        let lines = try JSONLines.parse(sb.auditFileLines.joined(separator: "\n"))
        #expect(lines.filter { $0["result"] as? String == "failed" }.count == 3, "\(sb.auditFileLines)")
    }

    @Test func anEmptyStandardInputIs77AndNamesTheOption() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-empty")
        try sb.store(name, TestData.textSecret(name))

        let r = try Sandbox.repeatingPAMWrapperRaces {
            try sb.vaultctl(["read", name, "--password-stdin"], stdin: .null, askpass: .unset)
        }
        #expect(r.status == 77, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("standard input ended before a password line (--password-stdin)"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
    }

    @Test func aTerminalOnStandardInputIsAUsageErrorBeforeAnythingRuns() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-tty")

        let r = try sb.vaultctl(["read", name, "--password-stdin"], stdin: .terminal)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("standard input is a terminal"), "\(r.stderr)")
        #expect(sb.wroteNothing, "a usage error touches nothing")
    }

    @Test func storeDoesNotTakeItBecauseItsStandardInputIsTheSecret() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-store")

        let r = try sb.vaultctl(["store", name, "--password-stdin"], stdin: .text("value"))
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("Unknown option '--password-stdin' for 'store'"), "\(r.stderr)")
        #expect(sb.wroteNothing)
    }

    /// The password is vaultctl's standard input; COMMAND's is the secret, and the --if-locked check's is
    /// /dev/null, so neither can take the password line.
    @Test func supplyGivesCommandTheSecretNotThePassword() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-supply")
        let secret = TestData.binarySecret(name)
        try sb.storeSuppliable(name, secret)
        let consumer = try sb.makeConsumer()
        let check = try sb.makeCheckUnlockedByDelivery()

        let r = try sb.vaultctlCounted(["supply", name, "--if-locked", check.path, "--password-stdin", "--", consumer.path],
                                       password: .wrong, stdin: Self.rightLine)
        #expect(r.status == 0, "\(r)")
        #expect(consumer.stdin == secret)
        #expect(!(consumer.stdin ?? []).contains(bytes: Array(Fixtures.pamPassword.utf8)))
        #expect(sb.askpassCalls == 0)
    }
}
