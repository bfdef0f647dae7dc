#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The password prompt on a real pseudo-terminal, typed at through `script(1)`: the keystrokes are sent once
/// the prompt is on the terminal (the prompt flushes what was typed before it).
@Suite("terminal prompt", .tags(.needsServices))
struct TerminalPromptTests {
    /// Runs `command` (a shell line) inside `script`, so it has a pseudo-terminal as its controlling
    /// terminal, and types `keys` there once `prompt` is on it (within 20 s). The terminal's input stays open
    /// until the command has ended, as a person's does: it comes from a FIFO whose writer, after the keys,
    /// lives until `script` is done.
    static func typed(_ sb: Sandbox, _ command: String, keys: String, prompt: String = "Password") throws -> ProcessResult {
        let files = "\(sb.root)/terminal-\(UInt32.random(in: 0...UInt32.max))"
        try #require(FileText.write("\(files).keys", keys, mode: 0o600))
        // Nothing is quoted into the shell line: the command, the prompt and the files go as variables.
        let line = #"""
            mkfifo "$FILES.in" || exit 1
            { i=0; until grep -qF "$PROMPT" "$FILES.typescript" 2>/dev/null || [ $i -ge 400 ]; do sleep 0.05; i=$((i+1)); done
              cat "$FILES.keys"; exec sleep 60; } > "$FILES.in" 2>/dev/null &
            "$SCRIPT" -q -e -f -c "$COMMAND" "$FILES.typescript" < "$FILES.in"; status=$?
            kill $!; exit $status
            """#
        let env = try sb.environment(askpass: .unset).merging(["FILES": files, "PROMPT": prompt, "COMMAND": command,
                                                                   "SCRIPT": Paths.tool("script")]) { $1 }
        return ProcessRunner.run(Paths.tool("sh"), ["-c", line], environment: env, timeout: .seconds(30)).droppingPAMWrapperNoise()
    }

    static func failures(_ sb: Sandbox) throws -> [Any] {
        let text = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? #"{"failures":[]}"#
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return object?["failures"] as? [Any] ?? []
    }

    /// Ctrl-D at the password prompt is a cancel like Ctrl-C: 77 "cancelled", and not a failed attempt.
    @Test func endOfInputAtThePromptIsCancelledAndNotCounted() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("ctrl-d")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        for i in 0..<3 {
            let r = try Self.typed(sb, "\(Paths.vaultctl) read \(name)", keys: "\u{04}")
            #expect(r.status == 77, "try \(i): \(r)")
            #expect(r.stdoutText.contains("Password") && r.stdoutText.contains("cancelled"), "try \(i): \(r.stdoutText.debugDescription)")
        }
        #expect(try Self.failures(sb).isEmpty, "nothing counted")
        let r = try sb.read(name)
        #expect(r.status == 0 && r.stdoutText == "the-value", "not blocked: \(r)")
    }

    /// Ctrl-C at the password prompt (issue 25, point 11): "cancelled" on the terminal, a `cancelled` line in
    /// the audit log, nothing counted, and the signal's own end (130), so a calling script stops too.
    @Test func ctrlCAtThePromptSaysCancelledAndIsAudited() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("ctrl-c")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        let r = try Self.typed(sb, "\(Paths.vaultctl) read \(name)", keys: "\u{03}")
        #expect(r.status == 130, "\(r)")
        #expect(r.stdoutText.contains("Password") && r.stdoutText.contains("vaultctl: cancelled."), "\(r.stdoutText.debugDescription)")
        #expect(!r.stdoutText.contains("the-value"))
        let last = sb.auditFileLines.last ?? ""
        #expect(last.contains(#""command":"read""#) && last.contains(#""result":"cancelled""#) && last.contains(name), "\(sb.auditFileLines)")
        #expect(last.range(of: #""time":"20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z""#, options: .regularExpression) != nil, "the time Ctrl-C came: \(last)")
        #expect(try Self.failures(sb).isEmpty, "nothing counted")
        // The terminal's echo is back afterwards (the shell around it ignores the Ctrl-C and asks stty; vaultctl
        // gets SIGINT back at its default through env).
        let after = try Self.typed(sb, "sh -c 'trap \"\" INT; env --default-signal=INT \(Paths.vaultctl) read \(name); stty -a'", keys: "\u{03}")
        #expect(after.stdoutText.contains("vaultctl: cancelled."), "\(after.stdoutText.debugDescription)")
        #expect(after.stdoutText.range(of: "(^|[ ;])echo([ ;]|$)", options: .regularExpression) != nil
                && after.stdoutText.range(of: "(^|[ ;])-echo([ ;]|$)", options: .regularExpression) == nil, "echo is on: \(after.stdoutText.debugDescription)")
    }

    /// A SIGINT that vaultctl was started with ignored (a background job of a script) stays ignored: the
    /// Ctrl-C handler is not put in its place, so the read goes on and ends as it would have.
    @Test func anIgnoredSIGINTStaysIgnored() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("sigint-ignored")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        // The askpass says it was asked, and answers once the SIGINT has been sent (each wait at most 20 s).
        let (asked, signalled) = ("\(sb.root)/asked", "\(sb.root)/signalled")
        let until = { (file: String) in "i=0; until [ -e '\(file)' ] || [ $i -ge 400 ]; do sleep 0.05; i=$((i+1)); done" }
        let askpass = "\(sb.root)/slow-askpass"
        try #require(FileText.write(askpass, "#!/bin/sh\n: > '\(asked)'\n\(until(signalled))\nprintf '%s\\n' '\(Fixtures.pamPassword)'\n",
                                    mode: 0o700) && chmod(askpass, 0o700) == 0)
        let script = "trap '' INT; \(Paths.vaultctl) read \(name) & pid=$!; \(until(asked)); kill -INT $pid; : > '\(signalled)'; wait $pid; echo \"rc=$?\""
        let r = ProcessRunner.run(Paths.tool("sh"), ["-c", script],
                                  environment: try sb.environment(askpass: .unset).merging(["VAULT_ASKPASS": askpass]) { $1 },
                                  timeout: .seconds(20)).droppingPAMWrapperNoise()
        #expect(r.stdoutText.contains("the-value") && r.stdoutText.contains("rc=0") && !r.stderr.contains("cancelled"), "\(r)")
    }

    /// Ctrl-D at the store's prompt is a person changing their mind, not a missing secret.
    @Test func ctrlDAtTheStorePromptIsCancelled() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("store-ctrl-d")
        let r = try Self.typed(sb, "\(Paths.vaultctl) store \(name)", keys: "\u{04}", prompt: "Secret for slot")
        #expect(r.status == 1 && r.stdoutText.contains("Cancelled at the prompt; nothing was stored."), "\(r)")
        #expect(sb.auditFileLines.last?.contains(#""result":"cancelled""#) == true, "a cancel, as Ctrl-C is: \(sb.auditFileLines)")
        #expect(try sb.vaultctl(["status", name]).stdoutText.hasPrefix("none:"))
    }

    /// No controlling terminal (`su -`, a process that left its session) but stdin and stderr are a
    /// terminal: vaultctl asks there, echo off, as sudo does.
    @Test func withoutAControllingTerminalItAsksOnStandardInputAndError() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("no-ctty")
        try sb.storeWithoutPAM(name, Array("the-value".utf8), mode: "device")
        let r = try Self.typed(sb, "\(Paths.tool("setsid")) -w \(Paths.vaultctl) read \(name)", keys: Fixtures.pamPassword + "\n")
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText.contains("Password") && r.stdoutText.contains("the-value"), "\(r.stdoutText.debugDescription)")
        #expect(!r.stdoutText.contains(Fixtures.pamPassword), "echo was off")
    }
}

/// `list` on a terminal pads the names so the modes line up; piped, it stays tab-separated.
@Suite("list on a terminal", .tags(.needsServices))
struct ListOnATerminalTests {
    @Test func listPadsColumnsOnATerminalAndUsesTabsWhenPiped() throws {
        let sb = try Sandbox(busAddress: "unix:path=/nonexistent")
        let short = "a-\(UInt32.random(in: 0...UInt32.max))"
        let long = short + "-much-longer-name"
        try sb.storeWithoutPAM(short, Array("1".utf8), mode: "device")
        try sb.storeWithoutPAM(long, Array("2".utf8), mode: "device")
        let piped = sb.vaultctlWithoutPAM(["list"])
        #expect(piped.stdoutText == "\(short)\tdevice\n\(long)\tdevice\n", "\(piped.stdoutText.debugDescription)")
        let shown = try TerminalPromptTests.typed(sb, "\(Paths.vaultctl) list", keys: "")
        let lines = shown.stdoutText.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { $0.hasSuffix("device") }
        let pad = String(repeating: " ", count: long.count - short.count + 2)
        #expect(lines == ["\(short)\(pad)device", "\(long)  device"], "\(shown.stdoutText.debugDescription)")
    }
}
