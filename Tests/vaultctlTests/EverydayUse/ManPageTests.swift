import Foundation
import Testing
import TestSupport
@testable import vaultctl

/// `vaultctl help --man`: the manual page, generated from the command table, renders without a warning
/// and lists every command, option, exit code, variable and file that `help` does.
@Suite("Manual page", .tags(.needsServices))
struct ManPageTests {
    /// The page as `man -l` shows it, wide enough that no line is wrapped.
    static func rendered(_ sb: Sandbox) throws -> (roff: [UInt8], text: String) {
        let r = try sb.vaultctl(["help", "--man"])
        try #require(r.status == 0 && r.stderr.isEmpty, "\(r)")
        var env = Fixtures.baseEnvironment
        env["MANPAGER"] = "cat"
        env["MANWIDTH"] = "250"
        env["HOME"] = sb.home
        let man = ProcessRunner.run(Paths.tool("man"), ["-l", "-"], environment: env, stdin: .bytes(r.stdout))
        try #require(man.status == 0, "man -l: \(man)")
        #expect(man.stderr.isEmpty, "man -l: \(man.stderr)")
        return (r.stdout, man.stdoutText)
    }

    @Test func groffPrintsNoWarnings() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["help", "--man"])
        try #require(r.status == 0, "\(r)")
        #expect(r.stdoutText.hasPrefix(".\\\" vaultctl(1)"))
        let groff = ProcessRunner.run(Paths.tool("groff"), ["-man", "-ww", "-z"], environment: Fixtures.baseEnvironment,
                                      stdin: .bytes(r.stdout))
        #expect(groff.status == 0, "\(groff)")
        #expect(groff.stderr.isEmpty, "groff warned: \(groff.stderr)")
        // As `man` renders it under LANG=C (the ASCII device) and in a UTF-8 terminal: no warning either.
        for device in ["-Tascii", "-Tutf8"] {
            let rendered = ProcessRunner.run(Paths.tool("groff"), ["-man", "-ww", "-z", device], environment: Fixtures.baseEnvironment,
                                             stdin: .bytes(r.stdout))
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "groff \(device) warned: \(rendered.stderr)")
        }
        #expect(sb.wroteNothing)
    }

    /// Every command and option `help` shows is on the page, so the two cannot disagree.
    @Test func listsEveryCommandAndOptionHelpShows() throws {
        let sb = try Sandbox()
        let page = try Self.rendered(sb).text
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS", "ENVIRONMENT",
                        "FILES", "SECURITY", "SEE ALSO"] {
            #expect(page.contains("\n\(heading)\n"), "section \(heading)")
        }
        let overview = try sb.vaultctl(["help"]).stdoutText
        let commandLines = overview.split(separator: "\n", omittingEmptySubsequences: false).drop { $0 != "Commands:" }.dropFirst().prefix { !$0.isEmpty }
        let names = commandLines.compactMap { line -> String? in
            let fields = line.trimmingPrefix("  ").split(separator: "  ", maxSplits: 1)
            return fields.first.map(String.init)
        }
        try #require(names.count >= 15, "\(overview)")
        for name in names {
            let screen = try sb.vaultctl(["help"] + name.split(separator: " ").map(String.init))
            // The page writes an ellipsis as three dots (the ASCII device has no glyph for it).
            let usage = (screen.stdoutText.split(separator: "\n").first.map { String($0.dropFirst("Usage: ".count)) } ?? "")
                .replacingOccurrences(of: "\u{2026}", with: "...")
            #expect(page.contains("       \(usage)\n"), "the page shows '\(usage)'")
            for line in screen.stdoutText.split(separator: "\n") where line.hasPrefix("  --") {
                let option = String(line.dropFirst(2).prefix { $0 != " " })
                #expect(page.contains("              \(option)"), "\(name): option \(option) on the page")
            }
        }
        for code in ["0", "1", "64", "65", "66", "69", "75", "77", "78"] {
            #expect(page.contains("\n       \(code)"), "exit code \(code)")
        }
        for variable in ["VAULT_ASKPASS", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "DBUS_SESSION_BUS_ADDRESS",
                         "VAULTCTL_PROMPT_SECONDS", "VAULTCTL_TPM2_TCTI"] {
            #expect(overview.contains(variable) && page.contains("\n       \(variable)\n"), "\(variable)")
        }
        for file in ["modes.json", "audit.log", "/etc/pam.d/vaultctl", "policy.json", "device.tpm2", "keyring-locked"] {
            #expect(page.contains(file), "\(file)")
        }
        // Words, not spacing: man justifies each line of a paragraph with extra spaces.
        let words = page.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("does not stop anyone who can run code as you"), "the device binding's limit")
        #expect(words.contains("With a TPM (binding tpm2"), "what the TPM binding stops and does not")
    }

    /// The exit codes' meanings on the page name the TPM's outcomes (69, 65, 75) and an unsafe helper (78).
    @Test func exitStatusNamesTheTPMOutcomes() throws {
        let sb = try Sandbox()
        let source = try sb.vaultctl(["help", "--man"]).stdoutText.replacingOccurrences(of: "\\-", with: "-")
        let section = try #require(source.components(separatedBy: ".SH EXIT STATUS\n").last?.components(separatedBy: ".SH ").first)
        func meaning(_ code: Int) -> String {
            section.components(separatedBy: ".B \(code)\n").last?.components(separatedBy: ".TP").first ?? ""
        }
        #expect(meaning(69).contains("the TPM that sealed the device key is not available") && meaning(69).contains("vaultctl-tpm helper is missing"), "\(meaning(69))")
        #expect(meaning(65).contains("sealed to another TPM or its TPM blobs damaged"), "\(meaning(65))")
        #expect(meaning(75).contains("dictionary-attack lockout, with the time to wait") && meaning(75).contains("holds a lock"), "\(meaning(75))")
        #expect(meaning(65).contains("the two entries of a typed secret differ"), "\(meaning(65))")
        #expect(meaning(78).contains("vaultctl-tpm helper others could replace"), "\(meaning(78))")
    }

    /// FILES names every state and config file the code keeps (each `"….json"` a source file names), and
    /// SECURITY every command that may ask PAM, in the words of the rendered page (issue 25, point 16).
    @Test func filesAndTheGatedCommandsFollowTheCode() throws {
        let sb = try Sandbox()
        let page = try Self.rendered(sb).text
        let files = try #require(page.range(of: "FILES")).upperBound
        let security = try #require(page.range(of: "SECURITY", range: files..<page.endIndex))
        let filesSection = String(page[files..<security.lowerBound])
        let sources = ProcessRunner.run(Paths.tool("sh"), ["-c", "grep -rhoE '\"[a-z-]+\\.json\"' '\(Paths.repositoryRoot)/Sources' | sort -u"],
                                        environment: Fixtures.baseEnvironment)
        let names = sources.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        try #require(names.contains("askpass-last.json") && names.contains("modes.json"), "\(sources)")
        for name in names {
            #expect(filesSection.contains(name), "FILES does not name \(name)")
        }
        let securitySection = String(page[security.upperBound...].prefix(2_000)).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for kind in CommandKind.allCases where kind.mayAskPAM {
            #expect(securitySection.contains(try #require(kind.gatedAs)), "SECURITY does not list \(kind.rawValue)")
        }
        #expect(securitySection.contains("delete of a value") && securitySection.contains("credential erase and send"))
    }

    @Test func manWithATopicIs64() throws {
        let sb = try Sandbox()
        let r = try sb.vaultctl(["help", "store", "--man"])
        r.expectFailure(64)
    }

    /// Table text that looks like roff (a leading dot, a backslash) stays text.
    @Test func escapesRoffInTableText() {
        #expect(ManPage.escape(".SH X\n'br \\fB--x…") == "\\&.SH X\n\\&'br \\efB\\-\\-x...")
        #expect(ManPage.escape("…\n×") == "...\n\\[u00D7]")
    }
}
