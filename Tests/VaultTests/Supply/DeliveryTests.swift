import TestSupport
import Foundation
import Testing
import Slots
@testable import Vault

/// `Delivery.toStdin`: the exact secret on the program's stdin, then EOF; never in its argv or environment.
@Suite struct DeliveryTests {
    let folder = TemporaryFolder()

    init() {
        // vaultctl ignores SIGPIPE (main.swift); so must this process, for a program that never reads.
        signal(SIGPIPE, SIG_IGN)
    }

    static let secretBytes: [UInt8] = [0x00, 0x0a] + Array("delivery-marker-7c1e".utf8) + [0xff, 0x00, 0x0d, 0x0a]
    var secret: SecretBytes { Self.secretBytes.withUnsafeBytes { SecretBytes(copying: $0) } }

    /// A `/bin/sh` script that writes its stdin, arguments and environment to files in the test's folder.
    func recorder(exiting status: Int32 = 0) -> [String] {
        let script = """
            cat > '\(folder.appending("stdin"))'
            printf '%s\\n' "$@" > '\(folder.appending("args"))'
            env > '\(folder.appending("env"))'
            exit \(status)
            """
        return ["/bin/sh", "-c", script, "recorder", "--user", "a b"]
    }

    func contents(_ file: String) -> [UInt8] {
        (FileManager.default.contents(atPath: folder.appending(file))).map { Array($0) } ?? []
    }

    @Test func theProgramGetsTheExactBytesThenEndOfFile() {
        // `cat` returns only at end of file, so its having written the file proves EOF came.
        #expect(Delivery.toStdin(recorder(), secret).status == 0)
        #expect(contents("stdin") == Self.secretBytes)
    }

    @Test func theSecretIsNeverInArgumentsOrEnvironment() {
        #expect(Delivery.toStdin(recorder(), secret).status == 0)
        let marker = Array("delivery-marker-7c1e".utf8)
        #expect(String(decoding: contents("args"), as: UTF8.self) == "--user\na b\n", "the arguments are passed as given")
        #expect(!contents("args").contains(bytes: marker))
        #expect(!contents("env").isEmpty)
        #expect(!contents("env").contains(bytes: marker))
    }

    @Test func theProgramsExitStatusIsReturned() {
        #expect(Delivery.toStdin(recorder(exiting: 5), secret).status == 5)
    }

    @Test func aProgramKilledByASignalIs128PlusTheSignal() {
        #expect(Delivery.toStdin(["/bin/sh", "-c", "cat >/dev/null; kill -TERM $$"], secret).status == 128 + SIGTERM)
    }

    @Test func aProgramThatNeverReadsStillHasItsStatusReported() {
        #expect(Delivery.toStdin(["/bin/sh", "-c", "exec 0<&-; exit 0"], secret).status == 0)
        #expect(Delivery.toStdin(["/bin/sh", "-c", "exit 4"], secret).status == 4)
    }

    /// Whether the program read any of the secret: what tells "rejected it" from "failed without looking".
    @Test func whetherTheProgramReadTheSecretIsReported() {
        #expect(Delivery.toStdin(["/bin/sh", "-c", "exit 4"], secret) == Delivery.Outcome(status: 4, readAny: false))
        #expect(Delivery.toStdin(["/bin/sh", "-c", "cat >/dev/null; exit 4"], secret) == Delivery.Outcome(status: 4, readAny: true))
        #expect(Delivery.toStdin(["/bin/sh", "-c", "head -c 1 >/dev/null; exit 4"], secret).readAny)
    }

    @Test func aProgramThatCannotStartIs127() {
        #expect(Delivery.toStdin([folder.appending("no-such-program")], secret).status == 127)
        #expect(Delivery.toStdin([], secret).status == 127)
    }
}

private extension Array where Element == UInt8 {
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}
