import Foundation
import Testing
import Slots
@testable import Vault

/// Serialized: each test spawns a child, and `Askpass` sets close-on-exec on its pipe only after `pipe()`,
/// so children spawned at the same moment by sibling tests could hold each other's pipe open.
@Suite(.serialized) struct AskpassTests {
    let folder = TemporaryFolder()

    @Test func askpassAnswersWithFirstLineOfOutput() throws {
        let program = try script(#"printf 'pw\nsecond line\n'"#)

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 64)

        #expect(try answer.get().text == "pw")
    }

    @Test func askpassPassesPromptAsOnlyArgument() throws {
        let seen = folder.appending("prompt")
        let program = try script(#"printf '%s|%s' "$#" "$1" > "\#(seen)"; printf 'pw\n'"#)

        _ = try Askpass.ask(program: program, prompt: "Password for alice: ", limit: 64).get()

        #expect(try String(contentsOfFile: seen, encoding: .utf8) == "1|Password for alice: ")
    }

    @Test func askpassExitingNonZeroDeclined() throws {
        let program = try script(#"printf 'pw\n'; exit 3"#)

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 64)

        #expect(failure(answer) == .declined(program, 3))
    }

    @Test func askpassKilledBySignalDeclinedWithShellStyleStatus() throws {
        // SIGKILL, because the child inherits the calling thread's signal mask, and test threads block SIGTERM.
        let program = try script(#"kill -KILL $$"#)

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 64)

        #expect(failure(answer) == .declined(program, 128 + SIGKILL))
    }

    @Test func askpassMissingProgramCouldNotRun() throws {
        let program = folder.appending("no-such-askpass")

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 64)

        #expect(failure(answer) == .couldNotRun(program, ENOENT))
    }

    @Test func askpassAnswerOverLimitTooLong() throws {
        let program = try script(#"printf '0123456789\n'"#)

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 8)

        #expect(failure(answer) == .tooLong)
    }

    @Test func askpassDrainsOutputAfterFirstLineSoProgramExitsCleanly() throws {
        // Far more than a pipe buffer after the answer: the program must not die of SIGPIPE or block.
        let program = try script(#"printf 'pw\n'; head -c 300000 /dev/zero"#)

        let answer = Askpass.ask(program: program, prompt: "Password: ", limit: 64)

        #expect(try answer.get().text == "pw")
    }

    // MARK: Helpers

    /// Writes an executable shell script with `body` and returns its path.
    private func script(_ body: String) throws -> String {
        let path = folder.appending("askpass-\(UUID().uuidString)")
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        guard chmod(path, 0o700) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return path
    }

    private func failure(_ answer: Result<SecretBytes, Askpass.Failure>) -> Askpass.Failure? {
        if case .failure(let failure) = answer { return failure }
        Issue.record("expected a failure, got an answer")
        return nil
    }
}
