import Testing
import TestSupport

/// Input quoted in messages: control characters and escape sequences in a slot name, a command word, an
/// option or a path reach stderr escaped (as systemd's `cescape` does), and every message stays one line.
@Suite("messages quote their input", .tags(.needsServices))
struct QuotedInputTests {
    static let hostile = "a\u{1b}]0;PWNED\u{07}\u{1b}[2J\nsecond line\u{202e}"

    static func invocations(_ sb: Sandbox) -> [[String]] {
        [["status", hostile],
         ["read", hostile],
         ["store", hostile],
         ["supply", hostile, "--", "/bin/true"],
         [hostile],
         ["recovery", hostile],
         ["read", "x", "--\(hostile)"],
         ["log", "--limit", hostile],
         ["allow-supply", "x", hostile],
         ["policy", "check", "\(sb.root)/\(hostile)"],
         ["help", hostile]]
    }

    @Test func controlCharactersNeverReachTheTerminalAndMessagesStayOneLine() throws {
        let sb = try Sandbox()
        for args in Self.invocations(sb) {
            let r = try sb.vaultctl(args, stdin: .text("v"))
            #expect(r.status != 0, "\(args.debugDescription): \(r)")
            let scalars = r.stderr.unicodeScalars
            #expect(!scalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7f || $0 == "\u{202e}" },
                    "\(args.debugDescription): raw control characters on stderr: \(r.stderr.debugDescription)")
            #expect(r.stderr.hasSuffix("\n") && r.stderr.filter { $0 == "\n" }.count == 1,
                    "\(args.debugDescription): one line: \(r.stderr.debugDescription)")
        }
        // What was typed is still recognisable: escaped, not dropped.
        let r = try sb.vaultctl(["status", Self.hostile])
        #expect(r.status == 64 && r.stderr.contains(#"'a\x1b]0;PWNED\x07\x1b[2J\nsecond line\u{202e}'"#), "\(r.stderr)")
    }
}
