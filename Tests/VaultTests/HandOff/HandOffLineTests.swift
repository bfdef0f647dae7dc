import Testing
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
}
