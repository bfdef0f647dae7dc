#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import vaultctl

/// Issue 36, point 3: after `vaultctl lock`, a headless `vaultctl unlock` cannot unlock gnome-keyring's
/// collection and prints a command that does. The command is taken from what vaultctl prints and run as
/// printed, on a private keyring whose daemon is already running, in a pseudo-terminal (`script(1)`) where
/// the password is typed at its prompt; afterwards one daemon serves the collection, unlocked.
@Suite("headless unlock advice", .tags(.needsServices))
struct HeadlessUnlockAdviceTests {
    /// The two prompts: `systemd-ask-password` where it is on PATH, else bash's `read -rs`.
    enum Prompt: String, CaseIterable { case systemdAskPassword, bashRead }

    /// The command at the end of `unlock`'s message (it ends the line, after the lead sentence).
    static func printedCommand(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let line = try #require(stderr.split(separator: "\n").first { $0.contains("is still locked") },
                                "no 'still locked' line in \(stderr.debugDescription)", sourceLocation: sourceLocation)
        let lead = try #require(line.range(of: KeyringUnlockAdvice.lead + " "), "no advice in \(line)",
                                sourceLocation: sourceLocation)
        return String(line[lead.upperBound...])
    }

    /// A run's result, set once by its thread. `Sendable` through its lock.
    final class Outcome: Sendable {
        let value = Mutex<ProcessResult?>(nil)
        let finished = DispatchSemaphore(value: 0)
    }

    /// Runs `command` with `/bin/sh` in a pseudo-terminal (`script`), types `keys` and Enter there once its
    /// prompt (`Keyring password`) is on the terminal, and holds the terminal open (a daemon started there
    /// lives while it does) until `check` has looked at the keyring: `check` runs once the command has ended.
    /// Returns the terminal's transcript on stdout.
    static func runInTerminal(_ command: String, keys: String, environment: [String: String], folder: String,
                              check: () -> Void) throws -> ProcessResult {
        let marker = "\(folder)/terminal-\(UInt32.random(in: 0...UInt32.max))"
        let (ready, done, transcript) = ("\(marker).ready", "\(marker).done", "\(marker).typescript")
        // Nothing is quoted into a shell line: the command, the keys and the files go as variables. The keys
        // go only once the prompt is shown (what is typed before it would be echoed, or flushed).
        let driver = #"""
            (until grep -q 'Keyring password' "$TRANSCRIPT" 2>/dev/null; do sleep 0.05; done; sleep 0.3
             printf '%s\r' "$KEYS"; while [ ! -e "$DONE" ]; do sleep 0.1; done) \
              | script -q -e -f -c "$ADVICE"'; touch "$READY"; while [ ! -e "$DONE" ]; do sleep 0.1; done' "$TRANSCRIPT"
            """#
        let env = environment.merging(["ADVICE": command, "KEYS": keys, "READY": ready, "DONE": done,
                                       "TRANSCRIPT": transcript]) { $1 }
        let outcome = Outcome()
        Thread {
            let r = ProcessRunner.run(Paths.tool("sh"), ["-c", driver], environment: env, timeout: .seconds(60))
            outcome.value.withLock { $0 = r }
            outcome.finished.signal()
        }.start()
        for _ in 0..<400 where !Paths.exists(ready) && outcome.value.withLock({ $0 == nil }) { usleep(100_000) }
        if Paths.exists(ready) { check() }
        _ = FileText.write(done, "", mode: 0o600)
        outcome.finished.wait()
        return outcome.value.withLock { $0! }
    }

    /// The README's "Without a desktop" line and the manual's `unlock` entry show the command this test runs.
    @Test func theReadmeAndTheManualShowTheCommandUnlockPrints() {
        let command = KeyringUnlockAdvice.command(systemdAskPassword: true)
        #expect(FileText.read("\(Paths.repositoryRoot)/README.md")?.contains("\n\(command)\n") == true)
        #expect(FileText.read("\(Paths.repositoryRoot)/docs/manual.md")?.contains("`\(command)`") == true)
    }

    @Test(arguments: Prompt.allCases)
    func theCommandUnlockPrintsUnlocksTheCollectionWithTheDaemonRunning(_ prompt: Prompt) throws {
        if prompt == .systemdAskPassword {
            try #require(Paths.tool("systemd-ask-password").hasPrefix("/"), "systemd-ask-password is not installed")
        }
        let keyring = try SecretServiceInstance.start(.unlocked)
        var started: [pid_t] = []
        defer {
            Processes.terminate(keyring.keyringDaemons + started)
            keyring.stop()
        }
        let sb = try Sandbox(keyring)
        let item = sb.uniqueSlot("advice")
        try sb.store(item, TestData.textSecret(item), mode: "sync")

        let lock = sb.vaultctlWithoutPAM(["lock"])
        try #require(lock.status == 0 && keyring.loginCollectionLocked() == true, "\(lock)")
        // Without systemd-ask-password on PATH, vaultctl offers bash's read instead.
        let path = prompt == .bashRead ? ["PATH": "\(sb.root)/no-such-folder"] : [:]
        let unlock = try sb.vaultctlCounted(["unlock"], overriding: path)
        #expect(unlock.status == 0, "\(unlock)")
        let command = try Self.printedCommand(unlock.stderr)
        let expected = prompt == .systemdAskPassword
            ? "systemd-ask-password --echo=no -n 'Keyring password:' | gnome-keyring-daemon --replace --unlock --components=secrets"
            : #"bash -c 'IFS= read -rsp "Keyring password: " p; echo >&2; printf %s "$p"' | gnome-keyring-daemon --replace --unlock --components=secrets"#
        #expect(command == expected, "\(command)")
        #expect(!command.contains("PASSWORD") && !command.contains(SecretServiceInstance.keyringPassword))
        try #require(keyring.loginCollectionLocked() == true, "still locked after the headless unlock")

        let original = keyring.keyringDaemons
        try #require(original.count == 1, "the instance's own daemon runs: \(original)")
        var daemons: [pid_t] = []
        var locked: Bool?
        let env = Fixtures.baseEnvironment.merging(keyring.keyringEnvironment) { $1 }
        let typed = try Self.runInTerminal(command, keys: SecretServiceInstance.keyringPassword, environment: env,
                                           folder: sb.root) {
            for _ in 0..<30 {  // the new daemon may take a moment to answer on the bus
                locked = keyring.loginCollectionLocked()
                if locked == false { break }
                usleep(100_000)
            }
            daemons = keyring.keyringDaemons
        }
        started = keyring.keyringDaemons.filter { !original.contains($0) }
        #expect(typed.status == 0, "\(typed)")
        #expect(typed.stdoutText.contains("Keyring password:"), "the prompt was shown: \(typed.stdoutText.debugDescription)")
        // Echo off: neither the password nor a mask of it is on the terminal.
        #expect(!typed.stdoutText.contains(SecretServiceInstance.keyringPassword) && !typed.stdoutText.contains("***"),
                "\(typed.stdoutText.debugDescription)")
        #expect(locked == false, "the login collection is unlocked")
        #expect(daemons.count == 1 && !original.contains(daemons.first ?? original[0]),
                "one daemon serves it, the one that replaced the first: \(daemons), first \(original)")
    }
}
