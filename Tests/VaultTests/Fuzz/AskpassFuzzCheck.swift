#if canImport(Glibc)
import Glibc
#endif
import Slots
@testable import GateProtocol
import Vault
@testable import VaultRules

/// The oracle of the `askpass` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a symlink)
/// and the corpus replay test: the input bytes are the whole output of an askpass program (`/bin/cat` of a
/// temporary file holding them), answered through `Askpass.ask` with the password limit, as the PAM
/// conversation asks.
///
/// The answer is the first line without its newline when it fits 4096 bytes, `.tooLong` otherwise; the rest
/// of the output is not read (the program may end with SIGPIPE, which is not a decline), whatever its size.
enum AskpassFuzzCheck {
    static let program = "/bin/cat"

    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    static func violation(_ input: UnsafeRawBufferPointer) -> String? {
        var template = Array("/tmp/vaultctl-fuzz-askpass.XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }  // no temporary file: not the code under test
        let file = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(file) }
        var written = 0
        while written < input.count {
            let n = write(fd, input.baseAddress! + written, input.count - written)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { close(fd); return nil }
            written += n
        }
        close(fd)

        let bytes = Array(input)
        let first = Array(bytes.prefix(while: { $0 != 0x0A }))
        switch Askpass.ask(program: program, prompt: file, limit: PasswordSource.limit) {
        case .success(let secret):
            let got = secret.withUnsafeBytes { Array($0) }
            guard first.count <= PasswordSource.limit else { return "answered \(got.count) bytes of a \(first.count)-byte line" }
            guard got == first else { return "the answer (\(got.count) bytes) is not the first line (\(first.count) bytes)" }
        case .failure(.tooLong):
            guard first.count > PasswordSource.limit else { return "tooLong for a first line of \(first.count) bytes" }
        case .failure(let other):
            return "askpass failed: \(other)"
        }
        return nil
    }
}
