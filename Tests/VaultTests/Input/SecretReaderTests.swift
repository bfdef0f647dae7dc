import Foundation
import Testing
import Slots
@testable import Vault

@Suite struct SecretReaderTests {
    @Test func readerReturnsExactBytesUpToEnd() throws {
        let sent: [UInt8] = [0x00, 0x70, 0x0A, 0xFF, 0x0D, 0x0A]
        let fd = try pipeHolding(sent)
        defer { close(fd) }

        let secret = try #require(bytes(SecretReader.read(fd: fd, limit: 64)))

        #expect(secret.bytes == sent)
    }

    @Test func readerAcceptsExactlyTheLimit() throws {
        let fd = try pipeHolding(Array("0123456789".utf8))
        defer { close(fd) }

        let secret = try #require(bytes(SecretReader.read(fd: fd, limit: 10)))

        #expect(secret.text == "0123456789")
    }

    @Test func readerRefusesOneByteOverTheLimit() throws {
        let fd = try pipeHolding(Array("0123456789A".utf8))
        defer { close(fd) }

        let outcome = SecretReader.read(fd: fd, limit: 10)

        guard case .tooLong = outcome else {
            Issue.record("expected tooLong, got \(outcome)")
            return
        }
    }

    @Test func readerStopsAtFirstNewlineDropsItAndLeavesTheRest() throws {
        let fd = try pipeHolding(Array("pw\nsecond line\n".utf8))
        defer { close(fd) }

        let first = try #require(bytes(SecretReader.read(fd: fd, limit: 64, stopAtNewline: true)))
        let rest = try #require(bytes(SecretReader.read(fd: fd, limit: 64)))

        #expect(first.text == "pw")
        #expect(first.count == 2)
        #expect(rest.text == "second line\n")
    }

    @Test func readerStoppingAtNewlineReadsToEndWhenThereIsNone() throws {
        let fd = try pipeHolding(Array("pw".utf8))
        defer { close(fd) }

        let secret = try #require(bytes(SecretReader.read(fd: fd, limit: 64, stopAtNewline: true)))

        #expect(secret.text == "pw")
    }

    @Test func readerStoppingAtNewlineCountsOnlyTheLineAgainstTheLimit() throws {
        let fd = try pipeHolding(Array("abcd\n".utf8))
        defer { close(fd) }

        let secret = try #require(bytes(SecretReader.read(fd: fd, limit: 4, stopAtNewline: true)))

        #expect(secret.text == "abcd")
    }

    @Test func readerStoppingAtNewlineRefusesLongLine() throws {
        let fd = try pipeHolding(Array("abcdefgh\n".utf8))
        defer { close(fd) }

        let outcome = SecretReader.read(fd: fd, limit: 4, stopAtNewline: true)

        guard case .tooLong = outcome else {
            Issue.record("expected tooLong, got \(outcome)")
            return
        }
    }

    @Test func readerReportsReadErrorWithErrno() {
        let outcome = SecretReader.read(fd: -1, limit: 64)

        guard case .failed(let e) = outcome else {
            Issue.record("expected failed, got \(outcome)")
            return
        }
        #expect(e == EBADF)
    }

    // MARK: One line at a time (--password-stdin)

    @Test func readLineGivesEachLineInTurnThenTheEnd() throws {
        let fd = try pipeHolding(Array("first\n\nlast".utf8))
        defer { close(fd) }

        #expect(line(SecretReader.readLine(fd: fd, limit: 64))?.text == "first")
        // An empty line is an answer (an empty password), not the end of the input.
        #expect(line(SecretReader.readLine(fd: fd, limit: 64))?.text == "")
        #expect(line(SecretReader.readLine(fd: fd, limit: 64))?.text == "last")
        guard case .endOfInput = SecretReader.readLine(fd: fd, limit: 64) else {
            Issue.record("expected endOfInput after the last line")
            return
        }
    }

    @Test func readLineOnAnEmptyStreamIsTheEnd() throws {
        let fd = try pipeHolding([])
        defer { close(fd) }

        guard case .endOfInput = SecretReader.readLine(fd: fd, limit: 64) else {
            Issue.record("expected endOfInput")
            return
        }
    }

    @Test func readLineRefusesALongLineAndReportsErrors() throws {
        let fd = try pipeHolding(Array("abcdefgh\n".utf8))
        defer { close(fd) }

        guard case .tooLong = SecretReader.readLine(fd: fd, limit: 4) else {
            Issue.record("expected tooLong")
            return
        }
        guard case .failed(let e) = SecretReader.readLine(fd: -1, limit: 4) else {
            Issue.record("expected failed")
            return
        }
        #expect(e == EBADF)
    }

    // MARK: Helpers

    /// The read end of a pipe that holds `bytes` and then ends (the write end is closed).
    private func pipeHolding(_ bytes: [UInt8]) throws -> Int32 {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        let written = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        close(fds[1])
        #expect(written == bytes.count)
        return fds[0]
    }

    private func line(_ outcome: SecretReader.Line) -> SecretBytes? {
        if case .line(let secret) = outcome { return secret }
        Issue.record("expected a line, got \(outcome)")
        return nil
    }

    private func bytes(_ outcome: SecretReader.Outcome) -> SecretBytes? {
        if case .bytes(let secret) = outcome { return secret }
        Issue.record("expected bytes, got \(outcome)")
        return nil
    }
}
