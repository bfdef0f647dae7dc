#if canImport(Glibc)
import Glibc
#endif
import Testing
import Slots
@testable import Vault

/// git's credential description as a helper reads it, and the slot a credential is kept in.
@Suite("git credential description and slot names")
struct GitCredentialTests {
    /// Reads a description from a file holding `text` (a file, not a pipe: a long text would fill a pipe).
    static func read(_ text: String) throws -> GitCredential {
        var template = Array("/tmp/vaultctl-gitcred.XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        try #require(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        try #require(lseek(fd, 0, SEEK_SET) == 0)
        return try GitCredential.read(fd: fd)
    }

    static func text(_ s: SecretBytes?) -> String? { s.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } }

    @Test func keepsTheFiveKeysAndIgnoresTheRest() throws {
        let c = try Self.read("capability[]=authtype\nprotocol=https\nhost=example.com:8443\nwwwauth[]=Basic realm=\"x\"\npath=a/b.git\nusername=alice\npassword=p=a=ss\nurl=https://x\npassword_expiry_utc=1\n\nprotocol=ignored\n")
        #expect(c.scheme == "https")
        #expect(c.host == "example.com:8443")
        #expect(c.path == "a/b.git")
        #expect(c.username == "alice")
        #expect(Self.text(c.password) == "p=a=ss", "everything after the first '=' is the value")
    }

    @Test func endsAtEndOfInputWithoutABlankLine() throws {
        let c = try Self.read("protocol=http\nhost=h")
        #expect(c.scheme == "http" && c.host == "h" && c.password == nil && c.username == nil)
    }

    @Test func aLineLongerThanTheLimitIsRefused() throws {
        #expect(throws: GitCredential.ReadError.lineTooLong) {
            _ = try Self.read("password=" + String(repeating: "x", count: GitCredential.lineLimit + 1) + "\n")
        }
    }

    @Test func slotNamesAreReadableAndReversible() throws {
        let cases: [(String, String, String?, String)] = [
            ("https", "github.com", "alice", "git_https_alice@github.com"),
            ("https", "example.org:8443", "bob@corp", "git_https_bob+40corp@example.org+3A8443"),
            ("http", "127.0.0.1:8080", nil, "git_http_127.0.0.1+3A8080"),
            ("https", "h", "a_b+c", "git_https_a+5Fb+2Bc@h"),
            ("https", "h", "zoë", "git_https_zo+C3+AB@h"),
        ]
        for (scheme, host, user, expected) in cases {
            let name = try #require(CredentialSlotName.name(scheme: scheme, host: host, username: user))
            #expect(name.rawValue == expected)
            let parts = try #require(CredentialSlotName.parts(of: name))
            #expect(parts.scheme == scheme && parts.host == host && parts.username == user, "\(expected)")
        }
    }

    /// `_` and `@` only separate, so two different credentials never share a slot.
    @Test func differentCredentialsGetDifferentSlots() throws {
        let a = CredentialSlotName.name(scheme: "https", host: "b@c", username: "a")
        let b = CredentialSlotName.name(scheme: "https", host: "c", username: "a@b")
        let c = CredentialSlotName.name(scheme: "https_a", host: "c", username: nil)
        #expect(a != nil && b != nil && c != nil)
        #expect(Set([a, b, c].compactMap { $0?.rawValue }).count == 3)
    }

    @Test func otherSlotsAndOverlongNamesHaveNoCredential() throws {
        #expect(CredentialSlotName.parts(of: try #require(SlotName("wifi"))) == nil)
        #expect(CredentialSlotName.parts(of: try #require(SlotName("git_https_a@b+ZZ"))) == nil)
        #expect(CredentialSlotName.name(scheme: "https", host: String(repeating: "h", count: 130), username: nil) == nil)
        #expect(CredentialSlotName.name(scheme: "", host: "h", username: nil) == nil)
    }
}
