import Foundation
import Testing
import TestSupport
@testable import vaultctl

/// Which commands take `--password-stdin`, decided once per `CommandKind`.
@Suite("--password-stdin in the command table")
struct PasswordStdinOptionTests {
    @Test(arguments: CommandKind.allCases)
    func exactlyTheCommandsThatMayAskPAMTakeIt(_ kind: CommandKind) throws {
        let command = try #require(CommandTable.all.first { $0.kind == kind })
        let takes = command.options.contains { $0.name == CommandTable.passwordStdinOption.name }
        // `credential get` and `erase` may ask PAM, but their standard input is git's credential description;
        // `store`'s is the new secret (a store over a value asks through VAULT_ASKPASS or the terminal).
        let expected = kind == .credentialGet || kind == .credentialErase || kind == .store ? false : kind.mayAskPAM
        #expect(takes == expected, "\(kind.rawValue)")
        #expect(command.synopsis.contains("--password-stdin") == expected, "the synopsis says so: \(command.synopsis)")
    }
}

/// `--password-stdin`: PAM is answered from standard input, one line per question, through the real PAM
/// stack. It is still a fresh authentication on every run, counted by the rate limit like any other.
@Suite("--password-stdin", .tags(.needsServices))
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

        let r = try Self.readFromStdin(sb, name, .text(Fixtures.pamPassword))
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == TestData.textSecret(name))
    }

    @Test func aWrongPasswordIs77AndCountsAsAFailure() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-wrong")
        try sb.store(name, TestData.textSecret(name))

        for attempt in 1...3 {
            let r = try Self.readFromStdin(sb, name, Self.wrongLine)
            #expect(r.status == 77, "attempt \(attempt): \(r)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("Authentication failed"), "\(r.stderr)")
        }
        // Three failures block the next gated command, whichever way its password would come.
        let blocked = try sb.vaultctl(["read", name, "--password-stdin"], stdin: Self.rightLine, askpass: .unset)
        blocked.expectFailure(75)
        #expect(try Self.failedAttempts(sb) == 3, "\(sb.auditFileLines)")
    }

    @Test func anEmptyStandardInputIs77AndNamesTheOption() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-empty")
        try sb.store(name, TestData.textSecret(name))

        let r = try Self.readFromStdin(sb, name, .null)
        r.expectFailure(77, saying: "standard input ended before a line for PAM's question")
        #expect(r.stderr.contains("leave the option out"), "says what to do: \(r.stderr)")
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
        let (check, checkStdin) = try sb.makeStdinRecordingCheckUnlockedByDelivery()

        let r = try sb.vaultctlCounted(["supply", name, "--if-locked", check.path, "--password-stdin", "--", consumer.path],
                                       password: .wrong, stdin: Self.rightLine)
        #expect(r.status == 0, "\(r)")
        #expect(consumer.stdin == secret)
        #expect(!(consumer.stdin ?? []).contains(bytes: Array(Fixtures.pamPassword.utf8)))
        #expect(check.runs == 3, "before the prompt, before delivery, once after")
        #expect(FileBytes.read(checkStdin) == [], "the check read its standard input and found nothing")
        #expect(sb.askpassCalls == 0)
    }

    // MARK: Every command that may ask PAM

    /// Each command that may ask PAM, run so that it asks, with the right password only on standard input
    /// (VAULT_ASKPASS gives a wrong one and counts its calls).
    @Test(arguments: ["move", "recovery show", "askpass", "allow-supply", "unlock"])
    func everyGatedCommandTakesThePasswordFromStandardInput(_ command: String) throws {
        // unlock's lock comes first and must not lock the shared keyring; the recovery code's slot name is
        // fixed, so it must not meet other sandboxes' codes there: both get a keyring of their own.
        let own = command == "unlock" || command == "recovery show" ? try SecretServiceInstance.start(.unlocked) : nil
        defer { own?.stop() }
        let sb = try own.map { try Sandbox($0) } ?? Sandbox()
        let name = sb.uniqueSlot("pw-cmd")
        let args: [String]
        switch command {
        case "move":
            try sb.store(name, TestData.textSecret(name))
            args = ["move", name, "--to", "sync"]
        case "recovery show":
            let made = try sb.vaultctl(["recovery", "generate"])
            try #require(made.status == 0, "\(made)")
            args = ["recovery", "show"]
        case "askpass":
            try sb.storeSuppliable(name, TestData.textSecret(name))
            args = ["askpass", name]
        case "allow-supply":
            try sb.store(name, TestData.textSecret(name))
            args = ["allow-supply", name, "on"]
        default:
            let lock = try sb.vaultctl(["lock"])
            try #require(lock.status == 0, "\(lock)")
            args = ["unlock"]
        }
        defer { if command == "move" { _ = try? sb.vaultctl(["delete", name]) } }  // an item on the shared keyring

        // A wrong line first: refused, so PAM really asked, and the answer came from stdin (the askpass
        // program, which would have given a wrong password too, was never run).
        let wrong = try sb.vaultctlCounted(args + ["--password-stdin"], password: .correct, stdin: Self.wrongLine)
        #expect(wrong.status == 77, "\(command) with a wrong line: \(wrong)")
        #expect(wrong.stderr.contains("Authentication failed"), "\(wrong.stderr)")
        let r = try sb.vaultctlCounted(args + ["--password-stdin"], password: .wrong, stdin: Self.rightLine)
        #expect(r.status == 0, "\(command): \(r)")
        #expect(sb.askpassCalls == 0, "\(command) did not run the askpass program")
        if command == "askpass" { #expect(r.stdout == TestData.textSecret(name)) }
        if command == "move" { #expect(try sb.listed()[name] == ["sync"]) }
        if command == "recovery show" { #expect(RecoveryCodeTests.isCode(r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "the code: \(r.stdoutText)") }
    }

    // MARK: What is counted and what is not

    @Test func endsOfInputBeforeAnyAnswerAreNotCounted() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-eof")
        try sb.store(name, TestData.textSecret(name))

        for _ in 1...3 {
            let r = try Self.readFromStdin(sb, name, .null)
            #expect(r.status == 77, "\(r)")
        }
        let r = try Self.readFromStdin(sb, name, Self.rightLine)
        #expect(r.status == 0, "three ends of input used up no tries: \(r)")
        #expect(try Self.failedAttempts(sb) == 0, "\(sb.auditFileLines)")
    }

    /// With descriptor 0 closed, the first file vaultctl opened would become its standard input, and a line
    /// read from it a counted guess; vaultctl puts /dev/null there first.
    @Test func aClosedStandardInputIsAnEndOfInputNotAGuess() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-closed")
        try sb.store(name, TestData.textSecret(name))

        let r = try Self.readFromStdin(sb, name, .closed)
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("standard input ended"), "\(r.stderr)")
        #expect(try Self.failedAttempts(sb) == 0, "\(sb.auditFileLines)")
    }

    /// With descriptor 1 closed, a file vaultctl opened (the audit log, a lock) could take its place and
    /// receive the secret. The secret goes nowhere but /dev/null.
    @Test func aClosedStandardOutputNeverPutsTheSecretInAFile() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-out-closed")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret)

        let r = try Self.readFromStdin(sb, name, Self.rightLine, prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" >&-"])
        #expect(r.status == 0, "written to /dev/null: \(r)")
        #expect(r.stdout.isEmpty)
        for file in Sandbox.filesUnder(sb.root) {
            #expect(!(FileBytes.read(file) ?? []).contains(bytes: secret), "the secret is in \(file)")
        }
        #expect(!Sandbox.filesUnder(sb.stateFolder).isEmpty, "the scan saw vaultctl's files")
    }

    @Test func aWrongPasswordAppearsNowhere() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-quiet")
        try sb.store(name, TestData.textSecret(name))

        let r = try Self.readFromStdin(sb, name, Self.wrongLine)
        #expect(r.status == 77, "\(r)")
        #expect(!r.stderr.contains(Fixtures.wrongPassword))
        #expect(!(FileText.read(sb.auditLogPath) ?? "").contains(Fixtures.wrongPassword))
        #expect(!(FileText.read(sb.auditLogPath) ?? "").isEmpty, "the attempt was logged")
    }

    @Test(arguments: [Array(repeating: UInt8(ascii: "a"), count: 4097) + [0x0A], Array("e2e\u{0}pam\n".utf8)])
    func aLineNoPasswordCanBeIs77AndNotCounted(_ line: [UInt8]) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-bad-line")
        try sb.store(name, TestData.textSecret(name))

        let r = try Self.readFromStdin(sb, name, .bytes(line))
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("Not authenticated"), "\(r.stderr)")
        #expect(try Self.failedAttempts(sb) == 0, "\(sb.auditFileLines)")
    }

    @Test func aLineEndingInCRLFIsThePasswordWithoutTheCR() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-crlf")
        try sb.store(name, TestData.textSecret(name))

        let r = try Self.readFromStdin(sb, name, .text("\(Fixtures.pamPassword)\r\n"))
        #expect(r.status == 0, "\(r)")
    }

    /// A stack that asks twice (a second factor after the password, here pam_matrix twice): one line on
    /// standard input answers the first question only. The password was handed over, so the attempt counts,
    /// whatever the second question's fate; otherwise a guesser would get free tries.
    @Test func aPasswordGivenToAStackThatAsksTwiceCountsEvenWhenTheSecondQuestionGoesUnanswered() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("pw-2fa")
        try sb.store(name, TestData.textSecret(name))
        let stack = try Self.twoQuestionStack(in: sb)

        let both = try Self.readFromStdin(sb, name, .text("\(Fixtures.pamPassword)\n\(Fixtures.pamPassword)\n"), overriding: stack)
        #expect(both.status == 0, "two lines answer two questions: \(both)")

        // A wrong password, and the right one, each with the second question unanswered: both count.
        for line in [Self.wrongLine, Self.rightLine] {
            let one = try Self.readFromStdin(sb, name, line, overriding: stack)
            #expect(one.status == 77, "\(one)")
            #expect(one.stderr.contains("Authentication failed"), "counted as a failed attempt: \(one.stderr)")
        }
        #expect(try Self.failedAttempts(sb) == 2, "\(sb.auditFileLines)")
    }

    /// `vaultctl read NAME --password-stdin` with no VAULT_ASKPASS, run again on a pam_wrapper race.
    static func readFromStdin(_ sb: Sandbox, _ name: String, _ stdin: Stdin, prefix: [String] = [],
                              overriding: [String: String] = [:],
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        try Sandbox.repeatingPAMWrapperRaces {
            try sb.vaultctl(["read", name, "--password-stdin"], stdin: stdin, askpass: .unset, prefix: prefix,
                            overriding: overriding, sourceLocation: sourceLocation)
        }
    }

    /// How many audit lines say an attempt failed (what the rate limit counted).
    static func failedAttempts(_ sb: Sandbox) throws -> Int {
        try JSONLines.parse(sb.auditFileLines.joined(separator: "\n")).filter { $0["result"] as? String == "failed" }.count
    }

    /// A pam_wrapper service folder whose `vaultctl` service asks for the password twice.
    static func twoQuestionStack(in sb: Sandbox) throws -> [String: String] {
        let shared = try #require(try Fixtures.pamEnvironment.get()["PAM_WRAPPER_SERVICE_DIR"])
        let passdb = "\(Paths.folder(of: shared))/passdb"
        // pam_matrix's path, from the shared stack's first line ("auth required /…/pam_matrix.so passdb=…").
        let firstLine = try #require(FileText.read("\(shared)/vaultctl")?.split(separator: "\n").first)
        let matrix = try #require(firstLine.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            .first { $0.hasSuffix("pam_matrix.so") })
        let folder = "\(sb.root)/pam-two-questions"
        mkdir(folder, 0o700)
        let service = "auth required \(matrix) passdb=\(passdb)\nauth required \(matrix) passdb=\(passdb)\naccount required \(matrix) passdb=\(passdb)\n"
        try #require(FileText.write("\(folder)/vaultctl", service, mode: 0o644))
        try #require(FileText.write("\(folder)/other", "auth required \(matrix) passdb=/nonexistent\n", mode: 0o644))
        return ["PAM_WRAPPER_SERVICE_DIR": folder]
    }
}
