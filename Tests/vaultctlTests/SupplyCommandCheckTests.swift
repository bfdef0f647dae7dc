#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A COMMAND that cannot run is refused before any prompt, and counts nothing: a typo must not cost a
/// password, let alone a place in the rate limit.
@Suite("supply: a COMMAND that cannot run", .tags(.needsServices))
struct SupplyCommandCheckTests {
    @Test func aCommandThatCannotRunIsRefusedBeforeAnyPromptAndNotCounted() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("typo")
        try sb.storeSuppliable(name, Array("the-value".utf8))
        let notExecutable = "\(sb.root)/not-executable"
        try #require(FileText.write(notExecutable, "#!/bin/sh\ncat\n", mode: 0o600))
        let cases: [([String], Int32)] = [
            (["ssh-addd"], 64),
            (["\(sb.root)/missing/program"], 64),
            ([notExecutable], 69),
        ]
        for (command, status) in cases {
            for _ in 0..<2 {
                let r = try sb.vaultctlCounted(["supply", name, "--"] + command)
                #expect(r.status == status, "\(command): \(r)")
                #expect(r.stderr.contains("nothing was asked") && r.stderr.filter { $0 == "\n" }.count == 1, "\(r.stderr)")
            }
        }
        #expect(sb.askpassCalls == 0, "no prompt")
        let limit = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? #"{"failures":[]}"#
        #expect(!limit.contains("blockedUntil") && limit.contains(#""failures":[]"#), "nothing counted: \(limit)")
        let ok = try sb.vaultctlCounted(["supply", name, "--", "cat"])
        #expect(ok.status == 0 && ok.stdoutText == "the-value", "\(ok)")
    }
}
