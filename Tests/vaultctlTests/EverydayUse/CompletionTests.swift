import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `vaultctl completion bash|zsh|fish`: scripts generated from the command table, driven for real in bash
/// (COMP_WORDS into the completion function) and fish (`complete -C`), loaded in zsh. Slot names come from
/// local metadata only: completing never prompts, never reads a secret and never waits for a bus.
@Suite("Shell completion", .tags(.needsServices))
struct CompletionTests {
    /// Runs `shell ARGS` with the sandbox's environment and the built vaultctl first on PATH.
    static func shell(_ sb: Sandbox, _ program: String, _ args: [String], bus: String? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        // Without pam_wrapper: completing never reaches PAM, and a preloaded pam_wrapper sets up its folder in
        // /tmp in every process it starts in; with the whole suite starting processes beside it, that can end
        // one at start-up (libpam_wrapper calls exit), and a `vaultctl completion --slots` whose stderr the
        // script hides answered nothing once in CI. A prompt would still reach the system's PAM stack, which
        // asks through VAULT_ASKPASS.
        var env = sb.environmentWithoutPAM()
        env["PATH"] = "\(Paths.folder(of: Paths.vaultctl)):\(Paths.systemPATH)"
        // A password prompt would run this and leave a mark: completing must never get there.
        env["VAULT_ASKPASS"] = "\(sb.root)/askpass-was-called"
        if let bus { env["DBUS_SESSION_BUS_ADDRESS"] = bus }
        return ProcessRunner.run(Paths.tool(program), args, environment: env, timeout: .seconds(20),
                                 sourceLocation: sourceLocation).droppingPAMWrapperNoise()
    }

    /// Completes each line in an interactive bash that sourced `vaultctl completion bash`; one answer line
    /// per case: the candidates, space-separated.
    static func bash(_ sb: Sandbox, _ lines: [[String]], bus: String? = nil) throws -> [String] {
        var driver = """
        source <(vaultctl completion bash) || exit 3
        complete -p vaultctl >/dev/null || exit 4
        t() {
            COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            COMPREPLY=()
            _vaultctl vaultctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "$(printf '%s\\n' "${COMPREPLY[@]}" | sort -u | tr '\\n' ' ')"
        }

        """
        for words in lines { driver += "t " + words.map { "'\($0)'" }.joined(separator: " ") + "\n" }
        let path = "\(sb.root)/drive.bash"
        try #require(FileText.write(path, driver))
        let r = try shell(sb, "bash", ["--norc", "--noprofile", "-i", "-c", ". \(path)"], bus: bus)
        try #require(r.status == 0, "\(r)")
        // Without a terminal, bash -i says only that it has no job control.
        let noise = r.stderr.split(separator: "\n").filter { !$0.contains("job control") && !$0.contains("terminal process group") }
        #expect(noise.isEmpty, "bash said: \(noise)")
        let answers = r.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            String($0).trimmingSpaces()
        }
        try #require(answers.count == lines.count, "\(r.stdoutText)")
        return answers
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        let sb = try Sandbox()
        let cases: [([String], String)] = [
            (["vaultctl", "st"], "status store"),
            (["vaultctl", "rec"], "receive recovery"),
            (["vaultctl", "recovery", ""], "confirm-copied generate show status"),
            (["vaultctl", "--v"], "--version"),
            (["vaultctl", "store", "x", "--"], "--allow-supply --help --mode"),
            (["vaultctl", "store", "x", "--mode", ""], "device sync"),
            (["vaultctl", "store", "x", "--mode", "=", ""], "device sync"),
            (["vaultctl", "store", "x", "--mode", "=", "s"], "sync"),
            (["vaultctl", "move", "x", "--to", "d"], "device"),
            (["vaultctl", "recovery", "generate", "--mode", ""], "device sync"),
            (["vaultctl", "read", "x", "--p"], "--password-stdin"),
            (["vaultctl", "allow-supply", "x", ""], "off on"),
            (["vaultctl", "allow-supply", "x", "--password-stdin", "o"], "off on"),
            (["vaultctl", "completion", ""], "bash fish zsh"),
            (["vaultctl", "help", "al"], "allow-supply"),
            (["vaultctl", "log", "--limit", ""], ""),
            (["vaultctl", "supply", "x", "--", "unsha"], "unshare"),
        ]
        let answers = try Self.bash(sb, cases.map(\.0))
        for ((words, expected), answer) in zip(cases, answers) {
            #expect(answer == expected, "\(words.joined(separator: " ")) completes to '\(answer)'")
        }
        #expect(!Paths.exists("\(sb.root)/askpass-was-called"))
    }

    /// Slot names of the device slot and of the record (a sync slot), with a bus that never answers: names
    /// at once, no prompt, no secret read.
    @Test func bashCompletesSlotNamesWithoutTheSecretService() throws {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("cdev")
        let synced = sb.uniqueSlot("csync")
        try sb.store(device, TestData.textSecret(device))
        try sb.store(synced, TestData.textSecret(synced), mode: "sync")
        let silent = try SilentBus()
        let clock = ContinuousClock()
        let start = clock.now
        let answers = try Self.bash(sb, [["vaultctl", "read", ""], ["vaultctl", "delete", "cd"],
                                         ["vaultctl", "move", "cs"], ["vaultctl", "status", "nothing-like-it"],
                                         ["vaultctl", "allow-supply", "cdev", ""]], bus: silent.address)
        #expect(clock.now - start < .seconds(4), "completing waited for the silent bus")
        #expect(answers[0] == [device, synced].sorted().joined(separator: " "))
        #expect(answers[1] == device)
        #expect(answers[2] == synced)
        #expect(answers[3] == "")
        #expect(answers[4] == "off on")
        #expect(!Paths.exists("\(sb.root)/askpass-was-called"), "completing started a password prompt")
    }

    @Test func slotsListsLocalNamesAndNeverPrompts() throws {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("sdev")
        try sb.store(device, TestData.textSecret(device))
        let silent = try SilentBus()
        let r = try sb.vaultctl(["completion", "--slots"], stdin: .terminal, askpass: .unset,
                                overriding: ["DBUS_SESSION_BUS_ADDRESS": silent.address], timeout: .seconds(10))
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText == "\(device)\n")
        #expect(!r.stdout.contains(bytes: TestData.textSecret(device)))
        #expect(r.elapsed < .seconds(2), "\(r)")
    }

    @Test func slotsLeavesOutNamesKeptForVaultctlsOwnValues() throws {
        let sb = try Sandbox()
        let device = sb.uniqueSlot("sdev")
        try sb.store(device, TestData.textSecret(device))
        // A record naming a reserved name, as a program running as the user could write it.
        let path = "\(sb.configFolder)/modes.json"
        try FileManager.default.removeItem(atPath: path)
        let text = #"{"version":1,"slots":{"\#(device)":"device","vaultctl.fleet-key":"device"}}"#
        try #require(FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                                    attributes: [.posixPermissions: 0o600]))
        let r = try sb.vaultctl(["completion", "--slots"], stdin: .terminal, askpass: .unset)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText == "\(device)\n", "\(r)")
    }

    @Test func fishCompletesFromTheTable() throws {
        let sb = try Sandbox()
        let slot = sb.uniqueSlot("fish")
        try sb.store(slot, TestData.textSecret(slot))
        let script = try sb.vaultctl(["completion", "fish"])
        try #require(script.status == 0, "\(script)")
        try #require(FileBytes.write("\(sb.root)/vaultctl.fish", script.stdout))
        let lines = ["vaultctl st", "vaultctl recovery ", "vaultctl store x --mode ", "vaultctl allow-supply x ",
                     "vaultctl read ", "vaultctl log --", "vaultctl supply x -- unsha"]
        let command = "source \(sb.root)/vaultctl.fish; or exit 3\n" + lines.map {
            "complete -C '\($0)' | cut -f1 | sort | string join ' '"
        }.joined(separator: "\n") + "\ntrue"  // string join exits 1 when it had only one word to join
        let r = try Self.shell(sb, "fish", ["--no-config", "-c", command])
        try #require(r.status == 0, "\(r): \(r.stdoutText)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let answers = r.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(answers.count >= lines.count, "\(r.stdoutText)")
        #expect(answers[0] == "status store")
        #expect(answers[1] == "confirm-copied generate show status")
        #expect(answers[2] == "device sync")
        #expect(answers[3] == "off on")
        #expect(answers[4] == slot)
        #expect(answers[5] == "--help --json --limit")
        #expect(answers[6] == "unshare", "the program to run after --")
    }

    /// zsh: the function loads through compinit from a `site-functions`-style folder, and by `source`.
    @Test func zshLoadsTheFunction() throws {
        let sb = try Sandbox()
        let script = try sb.vaultctl(["completion", "zsh"])
        try #require(script.status == 0, "\(script)")
        #expect(script.stdoutText.hasPrefix("#compdef vaultctl\n"))
        let folder = "\(sb.root)/site-functions"
        mkdir(folder, 0o700)
        try #require(FileBytes.write("\(folder)/_vaultctl", script.stdout))
        let r = try Self.shell(sb, "zsh", ["-f", "-c", """
            fpath=(\(folder) $fpath); autoload -Uz compinit; compinit -u -d \(sb.root)/zcompdump
            print -r -- "comp=$_comps[vaultctl]"
            autoload +X _vaultctl && print -r -- loaded
            source <(vaultctl completion zsh) && print -r -- sourced
            """])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.stdoutText == "comp=_vaultctl\nloaded\nsourced\n", "\(r.stdoutText)")
        let syntax = ProcessRunner.run(Paths.tool("zsh"), ["-n", "\(folder)/_vaultctl"], environment: Fixtures.baseEnvironment)
        #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax)")
    }

    /// zsh for real: an interactive zsh on a pseudo-terminal (driven by a small Python program) with the
    /// function installed in a site-functions folder and compinit, pressing Tab after each line.
    @Test func zshCompletesOnAPseudoTerminal() throws {
        let sb = try Sandbox()
        let slot = sb.uniqueSlot("zsh")
        try sb.store(slot, TestData.textSecret(slot))
        let script = try sb.vaultctl(["completion", "zsh"])
        let folder = "\(sb.root)/site-functions"
        mkdir(folder, 0o700)
        try #require(FileBytes.write("\(folder)/_vaultctl", script.stdout))
        let driver = "\(sb.root)/tab.py"
        try #require(FileText.write(driver, #"""
            import os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execve("/usr/bin/zsh", ["zsh", "-f", "-i"], dict(os.environ, TERM="dumb"))
            # Reads until `until` appears, or (without it) until nothing more came for `quiet` seconds after
            # the last output; at most `limit` seconds: a loaded machine answers late, not differently.
            def read(until=None, quiet=1.0, limit=20):
                end, out, last = time.time() + limit, b"", time.time()
                while time.time() < end:
                    if select.select([fd], [], [], 0.05)[0]:
                        try:
                            out += os.read(fd, 65536)
                        except OSError:
                            break
                        last = time.time()
                        if until is not None and until in out:
                            break
                    elif until is None and time.time() - last >= quiet:
                        break
                return out.decode(errors="replace")
            # The marker is printed by the shell, not echoed: the echo shows it as typed (with its ${:-}).
            os.write(fd, ("PS1='%% '; fpath=(%s $fpath); autoload -Uz compinit; compinit -u -d %s/zcd; print tab-driver-${:-ready}\n" % (sys.argv[1], sys.argv[1])).encode())
            read(until=b"tab-driver-ready")
            read(quiet=0.3)  # the prompt after it
            for line in sys.argv[2:]:
                os.write(fd, b"\x15" + line.encode() + b"\t")
                print(repr(read(quiet=1.5)))
            os.write(fd, b"\x15exit\n")
            read(quiet=0.5, limit=5)
            """#))
        let r = try Self.shell(sb, "python3", [driver, folder, "vaultctl re", "vaultctl read \(slot.prefix(6))",
                                               "vaultctl store x --mode ", "vaultctl allow-supply x ", "vaultctl move x --"])
        #expect(r.status == 0, "\(r)")
        let answers = r.stdoutText.split(separator: "\n").map(String.init)
        try #require(answers.count == 5, "\(r.stdoutText)")
        #expect(answers[0].contains("read") && answers[0].contains("Print a secret") && answers[0].contains("recovery"), "\(answers[0])")
        #expect(answers[1].contains("vaultctl read \(slot) "), "the slot name completed: \(answers[1])")
        #expect(answers[2].contains("device") && answers[2].contains("sync"), "\(answers[2])")
        #expect(answers[3].contains("vaultctl allow-supply x o"), "on|off's common start: \(answers[3])")
        #expect(answers[4].contains("--to") && answers[4].contains("--password-stdin"), "\(answers[4])")
        #expect(!answers.joined().contains("command not found"), "\(answers)")
    }

    @Test(arguments: [["completion"], ["completion", "tcsh"], ["completion", "bash", "--slots"]])
    func badCompletionUseIs64(args: [String]) throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(args)
        r.expectFailure(64)
    }
}
