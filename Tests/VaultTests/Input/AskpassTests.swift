import TestSupport
import Foundation
import Testing
import Slots
@testable import GateProtocol
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

    /// Writes an executable shell script with `body` and returns its path. The descriptor is close-on-exec:
    /// Foundation's atomic write leaves it inheritable, and a child another suite spawned meanwhile would
    /// keep the script open for writing, so running it failed with ETXTBSY.
    private func script(_ body: String) throws -> String {
        let path = folder.appending("askpass-\(UUID().uuidString)")
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o700)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let text = Array("#!/bin/sh\n\(body)\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == text.count else { throw POSIXError(.EIO) }
        return path
    }

    private func failure(_ answer: Result<SecretBytes, Askpass.Failure>) -> Askpass.Failure? {
        if case .failure(let failure) = answer { return failure }
        Issue.record("expected a failure, got an answer")
        return nil
    }
}
