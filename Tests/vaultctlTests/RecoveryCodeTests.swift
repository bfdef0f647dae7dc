import Testing
import TestSupport

/// `vaultctl recovery generate|show|status|confirm-copied`. The code lives in the fixed slot
/// `recovery-code`, so every test here uses a private keyring: a sync code in the shared keyring would be
/// seen (and removed) by other sandboxes.
@Suite("recovery code", .tags(.needsServices))
struct RecoveryCodeTests {
    /// Whether `text` is a recovery code: `^[A-Z2-7]{4}(-[A-Z2-7]{4}){7}$`.
    static func isCode(_ text: String) -> Bool {
        text.wholeMatch(of: try! Regex("^[A-Z2-7]{4}(-[A-Z2-7]{4}){7}$")) != nil
    }

    /// `recovery generate`; checks it succeeded and printed nothing on stdout.
    /// `recovery generate`: a first one asks nothing; `replacing` a code marked as written down passes
    /// `--replace` and the right password.
    private func generate(_ sb: Sandbox, mode: String? = nil, replacing: Bool = false,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let r = try sb.vaultctl(["recovery", "generate"] + (mode.map { ["--mode", $0] } ?? []) + (replacing ? ["--replace"] : []),
                                askpass: replacing ? .correct : .unset, sourceLocation: sourceLocation)
        try #require(r.status == 0, "recovery generate failed: \(r)", sourceLocation: sourceLocation)
        #expect(r.stdout.isEmpty, "generate prints no code on stdout: \(r.stdoutText.debugDescription)",
                sourceLocation: sourceLocation)
        return r
    }

    /// `recovery show` with the right password; the code, checked for its shape.
    private func show(_ sb: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try sb.vaultctl(["recovery", "show"], sourceLocation: sourceLocation)
        try #require(r.status == 0, "recovery show failed: \(r)", sourceLocation: sourceLocation)
        let code = r.stdoutText
        #expect(Self.isCode(code), "not a recovery code: \(code.debugDescription)",
                sourceLocation: sourceLocation)
        return code
    }

    /// No file under `folder` contains the code's text (with or without its dashes).
    private func expectNoFileHolds(_ code: String, under folder: String,
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        let files = Sandbox.filesUnder(folder)
        for file in files {
            let bytes = FileBytes.read(file) ?? []
            for form in [code, code.filter { $0 != "-" }] {
                #expect(!bytes.contains(bytes: Array(form.utf8)), "\(file) contains the recovery code",
                        sourceLocation: sourceLocation)
            }
        }
    }

    private func expectCodeNotIn(_ r: ProcessResult, _ code: String, _ what: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!r.stdoutText.contains(code) && !r.stderr.contains(code), "\(what) showed the code",
                sourceLocation: sourceLocation)
        let bare = code.filter { $0 != "-" }
        #expect(!r.stdoutText.contains(bare) && !r.stderr.contains(bare), "\(what) showed the code",
                sourceLocation: sourceLocation)
    }

    @Test func generateShowConfirmAndRotate() throws {
        try Sandbox.onPrivateKeyring { _, sb in

            let empty = try sb.recoveryStatus()
            #expect(empty.state == "none" && empty.copied == .some(false), "before any code: \(empty)")

            let first = try generate(sb)
            #expect(Paths.exists(sb.slotFile("recovery-code")), "the default mode is device")
            let status1 = try sb.recoveryStatus()
            #expect(status1.slot == "recovery-code")
            #expect(status1.state == "on-this-device" && status1.mode == "device", "\(status1)")
            #expect(status1.copied == .some(false), "not copied yet: \(status1)")

            // Show authenticates first, like read.
            for askpass in [AskpassMode.wrong, .unset] {
                let refused = try sb.vaultctl(["recovery", "show"], askpass: askpass)
                #expect(refused.status == 77, "\(askpass): \(refused)")
                #expect(refused.stdout.isEmpty, "no code without authentication")
            }
            let code1 = try show(sb)
            expectCodeNotIn(first, code1, "recovery generate")
            expectCodeNotIn(try sb.vaultctl(["recovery", "status", "--json"]), code1, "recovery status")
            #expect(try show(sb) == code1, "show prints the same code again")

            let refused = try sb.vaultctl(["recovery", "confirm-copied"], askpass: .unset)
            #expect(refused.status == 77, "the mark reads the code, so it needs PAM: \(refused)")
            let confirm = try sb.vaultctl(["recovery", "confirm-copied"])
            #expect(confirm.status == 0, "\(confirm)")
            expectCodeNotIn(confirm, code1, "recovery confirm-copied")
            let status2 = try sb.recoveryStatus()
            #expect(status2.copied == .some(true), "marked as copied: \(status2)")

            // Rotation: a new code clears the mark.
            let second = try generate(sb, replacing: true)
            let status3 = try sb.recoveryStatus()
            #expect(status3.copied == .some(false), "a new code is not copied yet: \(status3)")
            let code2 = try show(sb)
            #expect(code2 != code1, "two generates give different codes")
            expectCodeNotIn(second, code2, "the second recovery generate")
            expectCodeNotIn(second, code1, "the second recovery generate")

            for code in [code1, code2] {
                expectNoFileHolds(code, under: sb.configFolder)
                expectNoFileHolds(code, under: sb.stateFolder)
            }
            try #require(!Sandbox.filesUnder(sb.configFolder).isEmpty, "the config folder has files to search")
        }
    }

    @Test func syncCodeIsInTheKeyring() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in

            let gen = try generate(sb, mode: "sync")
            #expect(!Paths.exists(sb.slotFile("recovery-code")), "no device file for a sync code")
            let code = try show(sb)
            expectCodeNotIn(gen, code, "recovery generate --mode sync")
            #expect(sb.secretToolLookup("recovery-code").stdoutText == code)

            let status = try sb.recoveryStatus()
            #expect(status.state == "in-slot" && status.mode == "sync", "\(status)")
            #expect(status.copied == .some(false), "\(status)")
            for word in StatusTests.forbiddenWords {
                #expect(!status.message.lowercased().contains(word), "\(status.message)")
            }
            #expect(try sb.vaultctl(["recovery", "confirm-copied"]).status == 0)
            #expect(try sb.recoveryStatus().copied == .some(true))

            // Rotating into the device slot moves it out of the keyring and clears the mark.
            _ = try generate(sb, mode: "device", replacing: true)
            #expect(sb.secretToolLookup("recovery-code").stdout.isEmpty, "the old keyring code is gone")
            let rotated = try sb.recoveryStatus()
            #expect(rotated.state == "on-this-device" && rotated.copied == .some(false), "\(rotated)")
            #expect(try show(sb) != code)

            expectNoFileHolds(code, under: sb.configFolder)
        }
    }
}
