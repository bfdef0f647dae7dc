#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// What a child inherits and what holds vaultctl: `supply`'s COMMAND gets descriptors 0, 1 and 2 only, even
/// when vaultctl itself inherited more without close-on-exec; an askpass program that prints its answer and
/// keeps its standard output open does not keep vaultctl (and its rate-limit place) waiting.
@Suite("children: descriptors and bounds", .tags(.needsServices))
struct ChildBoundsTests {
    static func writeScript(_ path: String, _ text: String) throws {
        try #require(FileText.write(path, "#!/bin/sh\n" + text, mode: 0o700) && chmod(path, 0o700) == 0, "could not write \(path)")
    }

    @Test func supplysCommandGetsOnlyDescriptorsZeroOneAndTwo() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("fds")
        let s = try sb.vaultctl(["store", name, "--allow-supply"], stdin: .text("fd-secret"))
        try #require(s.status == 0, "\(s)")
        // COMMAND reads the secret, then lists its own open descriptors.
        let command = ["/bin/sh", "-c", #"cat >/dev/null; ls /proc/$$/fd"#]
        // A bash parent that leaves descriptors 7 and 9 open without close-on-exec, as shells do.
        let r = try sb.vaultctlCounted(["supply", name, "--"] + command,
                                       prefix: ["/bin/bash", "-c", #"exec 7</etc/hostname 9>/dev/null; exec "$0" "$@""#])
        #expect(r.status == 0, "\(r)")
        let fds = r.stdoutText.split(whereSeparator: { $0 == "\n" || $0 == " " }).map(String.init).sorted()
        #expect(fds == ["0", "1", "2"], "COMMAND's descriptors: \(fds)")
    }

    @Test func anAskpassProgramThatKeepsItsOutputOpenDoesNotHoldVaultctl() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("askpass-open")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        let program = "\(sb.root)/askpass-lingers"
        // Prints the password, then a child keeps standard output open for a minute.
        try Self.writeScript(program, "printf '%s\\n' '\(Fixtures.pamPassword)'\nsleep 60\n")
        let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": program], timeout: .seconds(25))
        #expect(!r.timedOut && r.elapsed < .seconds(10), "took \(r.elapsed)")
        #expect(r.status == 0 && r.stdoutText == "the-value", "\(r)")
    }
}

/// An askpass program that never answers is stopped after the policy's `prompt.askpassSeconds`: 77
/// "did not answer", not counted.
@Suite("askpass: a program that never answers", .tags(.needsServices))
struct AskpassNoAnswerTests {
    @Test func anAskpassProgramThatNeverAnswersIsStoppedAndNotCounted() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("askpass-silent")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        try sb.writePolicy(#"{"version":1,"prompt":{"askpassSeconds":2}}"#)
        let program = "\(sb.root)/askpass-silent"
        try ChildBoundsTests.writeScript(program, "exec sleep 60\n")
        for _ in 0..<3 {
            let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": program], timeout: .seconds(25))
            #expect(!r.timedOut && r.elapsed < .seconds(10), "took \(r.elapsed)")
            #expect(r.status == 77 && r.stderr.contains("did not answer within 2 s"), "\(r)")
        }
        let limit = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? ""
        #expect(limit.contains(#""failures":[]"#) && !limit.contains("blockedUntil"), "nothing counted: \(limit)")
        #expect(try sb.read(name).stdoutText == "the-value", "not blocked")
    }
}
