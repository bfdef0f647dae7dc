#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `read SLOT --clip`: the secret on the real clipboard (Xvfb with xclip or xsel, headless sway with
/// wl-copy), said where and for how long, cleared after the time only if the clipboard still holds it.
@Suite("read --clip", .tags(.needsServices))
struct ClipboardTests {
    /// How long the clipboard tests leave a secret there: long enough that a paste right after the read
    /// comes within it on a loaded machine (a 2 s window was missed under CI-like load).
    static let window: UInt32 = 6

    /// Runs a clipboard tool against the session, as the person pasting would.
    static func paste(_ program: String, _ args: [String], session: [String: String]) -> ProcessResult {
        ProcessRunner.run(Paths.tool(program), args, environment: Fixtures.baseEnvironment.merging(session) { $1 },
                          timeout: .seconds(10))
    }

    static func copy(_ text: String, _ program: String, _ args: [String], session: [String: String]) -> ProcessResult {
        ProcessRunner.run(Paths.tool(program), args, environment: Fixtures.baseEnvironment.merging(session) { $1 },
                          stdin: .text(text), timeout: .seconds(10))
    }

    /// The clearing processes `read --clip` left behind in `sb`: vaultctl forks one into a session of its own
    /// before it exits, so it runs when the read has returned, and sleeps the window out.
    static func clearers(_ sb: Sandbox) -> [pid_t] {
        Processes.find(command: "vaultctl", environmentHolds: "XDG_STATE_HOME=\(sb.stateHome)")
    }

    /// Waits until `clearers` have ended (they have then looked at the clipboard and cleared it or left it
    /// alone): at most `window` seconds and the bounds of two runs of the clipboard tool (5 s each) beyond.
    static func waitForTheClear(_ clearers: [pid_t], window: UInt32, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!clearers.isEmpty, "no clearing process was left behind", sourceLocation: sourceLocation)
        let ended = Wait.until(seconds: Double(window) + 12, interval: 0.1) { !clearers.contains(where: Processes.isRunning) }
        #expect(ended, "the clearing process \(clearers) did not end within \(window) s and the tool's bounds", sourceLocation: sourceLocation)
    }

    /// A folder holding an `xclip` that notes its arguments and environment, then runs the real one.
    static func recordingXclip(_ sb: Sandbox) throws -> (folder: String, log: String) {
        let folder = "\(sb.root)/tools"
        mkdir(folder, 0o700)
        let log = "\(sb.root)/xclip-calls"
        try #require(FileText.write("\(folder)/xclip", """
            #!/bin/sh
            { printf 'args:'; printf ' %s' "$@"; printf '\\n'; env; } >> '\(log)'
            exec /usr/bin/xclip "$@"

            """, mode: 0o700))
        return (folder, log)
    }

    @Test func x11CopiesSaysWhereAndClearsAfterTheTime() throws {
        let x = try VirtualX11()
        let sb = try Sandbox()
        let name = sb.uniqueSlot("clip")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret)
        let (tools, log) = try Self.recordingXclip(sb)
        sb.resetAskpassLog()
        // A window long enough that the paste below comes within it on a loaded machine (CI's 2 cores).
        let r = try sb.vaultctlCounted(["read", name, "--clip", "--clip-seconds", "\(Self.window)"],
                                       overriding: ["DISPLAY": x.display, "PATH": "\(tools):\(Paths.systemPATH)"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty, "nothing on standard output")
        #expect(r.stderr == "Copied slot '\(name)' to the clipboard (xclip, X11 display \(x.display)); it is cleared in \(Self.window) s if it still holds it.\n", "\(r.stderr)")
        #expect(sb.askpassCalls == 1)
        let clearers = Self.clearers(sb)
        let session = ["DISPLAY": x.display]
        #expect(Self.paste("xclip", ["-selection", "clipboard", "-out"], session: session).stdout == secret, "pasted")
        let calls = FileText.read(log) ?? ""
        #expect(calls.contains("args: -selection clipboard -in"), "\(calls)")
        #expect(!calls.contains(String(decoding: secret, as: UTF8.self)), "the secret is in no tool's argv or environment")
        Self.waitForTheClear(clearers, window: Self.window)
        let after = Self.paste("xclip", ["-selection", "clipboard", "-out"], session: session)
        #expect(!after.stdout.contains(bytes: secret), "cleared after \(Self.window) s: \(after)")
        #expect(sb.auditFileLines.contains { $0.contains("\"read\"") && $0.contains("\"ok\"") })
    }

    @Test func x11KeepsWhatWasCopiedSince() throws {
        let x = try VirtualX11()
        let sb = try Sandbox()
        let name = sb.uniqueSlot("clip-kept")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.vaultctlCounted(["read", name, "--clip"], overriding: ["DISPLAY": x.display, "VAULTCTL_CLIP_SECONDS": "2"])
        #expect(r.status == 0 && r.stderr.contains("cleared in 2 s"), "\(r)")
        let clearers = Self.clearers(sb)
        let session = ["DISPLAY": x.display]
        #expect(Self.copy("copied by you later", "xclip", ["-selection", "clipboard", "-in"], session: session).status == 0)
        Self.waitForTheClear(clearers, window: 2)
        #expect(Self.paste("xclip", ["-selection", "clipboard", "-out"], session: session).stdoutText == "copied by you later",
                "the clear left someone else's clipboard alone")
    }

    /// Without xclip, xsel does it.
    @Test func x11WithXselWhenThereIsNoXclip() throws {
        let x = try VirtualX11()
        let sb = try Sandbox()
        let name = sb.uniqueSlot("clip-xsel")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret)
        let tools = "\(sb.root)/only-xsel"
        mkdir(tools, 0o700)
        try #require(symlink(Paths.tool("xsel"), "\(tools)/xsel") == 0)
        let r = try sb.vaultctlCounted(["read", name, "--clip", "--clip-seconds", "\(Self.window)"],
                                       overriding: ["DISPLAY": x.display, "PATH": tools])
        #expect(r.status == 0 && r.stderr.contains("(xsel, X11 display"), "\(r)")
        let clearers = Self.clearers(sb)
        let session = ["DISPLAY": x.display]
        #expect(Self.paste("xsel", ["--clipboard", "--output"], session: session).stdout == secret)
        Self.waitForTheClear(clearers, window: Self.window)
        #expect(Self.paste("xsel", ["--clipboard", "--output"], session: session).stdout.isEmpty, "cleared")
    }

    @Test func waylandWithWlCopy() throws {
        let wayland = try HeadlessWayland()
        let sb = try Sandbox()
        let name = sb.uniqueSlot("clip-wl")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret)
        // DISPLAY set too: Wayland comes first, as with pass.
        let r = try sb.vaultctlCounted(["read", name, "--clip", "--clip-seconds", "\(Self.window)"],
                                       overriding: wayland.environment.merging(["DISPLAY": ":99"]) { $1 })
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("(wl-copy, Wayland display \(wayland.socket))"), "\(r.stderr)")
        let clearers = Self.clearers(sb)
        #expect(Self.paste("wl-paste", ["--no-newline"], session: wayland.environment).stdout == secret)
        Self.waitForTheClear(clearers, window: Self.window)
        #expect(!Self.paste("wl-paste", ["--no-newline"], session: wayland.environment).stdout.contains(bytes: secret), "cleared")
    }

    /// No session or no tool: one line naming what to install, 69, nothing printed, no prompt.
    static let noClipboard: [([String: String], String)] = [
        ([:], "no graphical session"),
        (["DISPLAY": ":97", "PATH": "/nonexistent"], "install xclip or xsel"),
        (["WAYLAND_DISPLAY": "wayland-97", "PATH": "/nonexistent"], "install wl-clipboard"),
    ]

    @Test(arguments: ClipboardTests.noClipboard)
    func noClipboardIs69BeforeAnyPrompt(session: [String: String], says: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("noclip")
        try sb.store(name, TestData.textSecret(name))
        sb.resetAskpassLog()
        let r = try sb.vaultctlCounted(["read", name, "--clip"], overriding: session)
        r.expectFailure(69)
        #expect(r.stderr.contains(says) && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(sb.askpassCalls == 0, "no password asked for a secret that could not go anywhere")
    }

    static let badTimes: [([String], [String: String], Int32)] = [
        (["--clip", "--clip-seconds", "0"], [:], 64),
        (["--clip-seconds", "5"], [:], 64),
        (["--clip", "--clip-seconds", "soon"], [:], 64),
        (["--clip"], ["VAULTCTL_CLIP_SECONDS": "forever"], 78),
    ]

    @Test(arguments: ClipboardTests.badTimes)
    func badClipTimesAreRefused(args: [String], env: [String: String], code: Int32) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("cliptime")
        try sb.store(name, TestData.textSecret(name))
        sb.resetAskpassLog()
        let r = try sb.vaultctlCounted(["read", name] + args, overriding: env.merging(["DISPLAY": ":96"]) { $1 })
        #expect(r.status == code, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(sb.askpassCalls == 0)
    }
}
