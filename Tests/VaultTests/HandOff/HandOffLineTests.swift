import Testing
import Slots
@testable import Vault

/// The hand-off protocol's lines: written as documented, read strictly.
@Suite struct HandOffLineTests {
    @Test func linesAreWrittenAsDocumented() {
        #expect(HandOffLine(.ready).bytes == Array("vaultctl-receive 1 ready\n".utf8))
        #expect(HandOffLine(.refused, "not nearby").bytes == Array("vaultctl-receive 1 refused not nearby\n".utf8))
    }

    @Test(arguments: HandOffLine.Word.allCases)
    func everyWordRoundTrips(_ word: HandOffLine.Word) {
        let line = HandOffLine(word, "target 'data' — ünïcode ok")
        #expect(HandOffLine.parse(Array(line.bytes.dropLast())) == line)
    }

    @Test func eachPhaseAllowsOnlyItsWords() {
        // Nothing was sent before the first line, so it can say neither delivered nor rejected.
        #expect(HandOffLine.Word.allCases.filter { HandOffLine.Phase.first.allows($0) } == [.ready, .unlocked, .refused, .blocked, .failed])
        #expect(HandOffLine.Word.allCases.filter { HandOffLine.Phase.result.allows($0) } == [.delivered, .unlocked, .rejected, .failed])
    }

    @Test(arguments: [
        "vaultctl-receive 2 ready",            // another version
        "vaultctl-receive 1 readyy",           // an unknown word
        "vaultctl-receive 1 ",                 // no word
        "vaultctl-receive 1 refused ",         // a space and no reason
        "vaultctl-receive 1 refused a\tb",     // a control character
        "vaultctl-receive 1 refused a\u{1b}[2J",
        "Welcome to the server!",              // a shell's greeting
        "VAULTCTL-RECEIVE 1 ready",
    ])
    func anythingElseIsNotALine(_ text: String) {
        #expect(HandOffLine.parse(Array(text.utf8)) == nil, "\(text.debugDescription)")
    }

    @Test func invalidUTF8AndOverlongLinesAreRefused() {
        #expect(HandOffLine.parse(Array("vaultctl-receive 1 failed ".utf8) + [0xff, 0xfe]) == nil)
        let long = "vaultctl-receive 1 failed " + String(repeating: "x", count: 1100)
        #expect(HandOffLine.parse(Array(long.utf8)) == nil)
        let tooLongReason = "vaultctl-receive 1 failed " + String(repeating: "x", count: 600)
        #expect(HandOffLine.parse(Array(tooLongReason.utf8)) == nil)
    }

    @Test func aReasonIsMadeOneShortLine() {
        let line = HandOffLine(.failed, "two\nlines\u{1b}[31m" + String(repeating: "é", count: 400))
        #expect(!line.text.contains("\n") && !line.text.contains("\u{1b}"))
        #expect(line.text.utf8.count <= 512)
        #expect(HandOffLine.parse(Array(line.bytes.dropLast())) == line, "what the receiver writes, the sender reads")
    }

    static func bytes(_ b: [UInt8]) -> SecretBytes { b.withUnsafeBytes { SecretBytes(copying: $0) } }

    @Test func aSecretFramedByItsLengthIsUnframedExactly() throws {
        let secret: [UInt8] = [0x00, 0x0a, 0x31, 0xff, 0x0a]
        let framed = HandOffLine.lengthHeader(secret.count) + secret
        let whole = try #require(HandOffLine.unframe(Self.bytes(framed)))
        #expect(whole.withUnsafeBytes { Array($0) } == secret)
    }

    @Test(arguments: [
        Array("10\nabc".utf8),            // cut short
        Array("3\nabcd".utf8),            // more than said
        Array("0\n".utf8),                // empty
        Array("03\nabc".utf8),            // a leading zero
        Array("+3\nabc".utf8),            // a sign
        Array("abc".utf8),                // no header
        Array("65537\n".utf8) + [UInt8](repeating: 0x61, count: 65537),  // over 64 KiB
    ])
    func anythingElseIsRefused(_ received: [UInt8]) {
        #expect(HandOffLine.unframe(Self.bytes(received)) == nil)
    }
}
