#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Presence on every read: a fingerprint (pam_fprintd, the real fprintd with libfprint's virtual reader) in
/// the `vaultctl` PAM stack, through the gate and through the unprotected path, on a machine of its own
/// (`GateMachine`, with `scripts/fprintd-virtual.sh`). alice's right index finger is `alice-finger`.
@Suite(.serialized, .enabled(if: GateMachine.canRunFingerprintReader, "needs root and fprintd, libpam-fprintd, python3-dbusmock ('make deps')"))
final class PresenceTests {
    static let shared = Result { () throws -> GateMachine in
        let m = try GateMachine.start()
        try m.startFingerprintReader()
        try m.enrol("alice", finger: "alice-finger")
        return m
    }
    let m: GateMachine

    /// The two paths: through the gate, and the same binary with no gate beside it.
    enum Path: String, CaseIterable { case gate, unprotected }

    init() throws {
        m = try Self.shared.get()
        m.stopScans()
        m.reset()
        // The fingerprint stack vaultctl ships (`make install PAM_STACK=fingerprint`), waiting 10 s (pam_fprintd's
        // least) instead of 30 for a finger.
        let shipped = "\(Paths.repositoryRoot)/policy/pam.d/vaultctl-fingerprint"
        m.asRoot("sed 's/timeout=30/timeout=10/' \(shipped) > /etc/pam.d/vaultctl && grep -q 'pam_fprintd.so max-tries=1 timeout=10' /etc/pam.d/vaultctl")
    }

    func vaultctl(_ path: Path) -> String { path == .gate ? m.vaultctl : m.plainVaultctl }

    /// A read with no terminal, no askpass program and no --password-stdin: nothing to answer a prompt with.
    func read(_ path: Path, _ slot: String, environment: [String: String] = [:], wrap: [String] = []) -> ProcessResult {
        m.run("alice", ["read", slot], program: vaultctl(path), environment: environment, wrap: wrap, timeout: .seconds(40))
    }

    func gateOrStateLog(_ path: Path) -> String {
        path == .gate ? m.gateLog("alice") : m.asRoot("cat \(m.home("alice"))/.local/state/vaultctl/audit.log 2>/dev/null").stdoutText
    }

    @Test(arguments: Path.allCases)
    func theRightFingerReadsWithNoTerminalAndNoAskpass(_ path: Path) throws {
        let stored = m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret"))
        try #require(stored.status == 0, "\(stored)")
        m.scanSoon("alice-finger")
        let r = read(path, "mail")
        #expect(r.status == 0 && r.stdoutText == "s3cret", "\(r)")
        // The module's words, one line, and no question.
        #expect(r.stderr.contains("Swipe your right index finger across the fingerprint reader"), "\(r)")
        #expect(!r.stderr.contains("terminal") && !r.stderr.contains("askpass"), "\(r)")

        // An askpass program is run only for a question, never for a message: this one leaves a mark if run.
        let mark = "\(m.home("alice"))/asked"
        let askpass = try m.script("askpass-\(path.rawValue)", "touch \(mark); echo wrong")
        m.scanSoon("alice-finger")
        let withAskpass = read(path, "mail", environment: ["VAULT_ASKPASS": askpass])
        #expect(withAskpass.status == 0 && withAskpass.stdoutText == "s3cret", "\(withAskpass)")
        #expect(m.asRoot("test -e \(mark)").status != 0, "the askpass program was run for a finger")
        // --password-stdin takes a line only for a question: a line given and none asked for is not used.
        m.scanSoon("alice-finger")
        let withLine = m.run("alice", ["read", "mail", "--password-stdin"], program: vaultctl(path), stdin: .text("unused\n"),
                             timeout: .seconds(40))
        #expect(withLine.status == 0 && withLine.stdoutText == "s3cret", "\(withLine)")
    }

    @Test(arguments: Path.allCases)
    func statusSaysTheStackAsksForAFinger(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        let status = m.run("alice", ["status", "mail", "--json"], program: vaultctl(path))
        #expect(status.status == 0 && status.stdoutText.contains("\"pam\":{\"file\":\"/etc/pam.d/vaultctl\",\"factors\":[\"fingerprint\"]"), "\(status)")
        let key = m.run("alice", ["device-key", "status"], program: vaultctl(path))
        #expect(key.status == 0 && key.stdoutText.contains("which names: fingerprint (pam_fprintd, required)"), "\(key)")
    }

    @Test(arguments: Path.allCases)
    func aWrongFingerIsCountedAndBlocksAfterThree(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        for attempt in 1...3 {
            m.scanSoon("bob-finger")
            let r = read(path, "mail")
            #expect(r.status == 77 && r.stdout.isEmpty, "attempt \(attempt): \(r)")
            #expect(r.stderr.contains("Failed to match fingerprint"), "attempt \(attempt): \(r)")
        }
        // Three failed matches: blocked, with no finger asked for.
        let blocked = read(path, "mail")
        #expect(blocked.status == 75 && blocked.stdout.isEmpty && blocked.stderr.contains("blocked"), "\(blocked)")
        #expect(gateOrStateLog(path).contains("\"result\":\"failed\""))
    }

    @Test(arguments: Path.allCases)
    func noFingerIsNotCounted(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        // pam_fprintd gives up after its 10 s: not authenticated, and not a guess.
        let none = read(path, "mail")
        #expect(none.status == 78 && none.stdout.isEmpty && none.stderr.contains("did not get it in time"), "\(none)")
        #expect(!gateOrStateLog(path).contains("\"result\":\"failed\""), "a reader left alone is no failed guess")
        m.scanSoon("alice-finger")
        let then = read(path, "mail")
        #expect(then.status == 0 && then.stdoutText == "s3cret", "\(then)")
    }

    @Test(arguments: Path.allCases)
    func oneBoundHoldsTheWholeAuthentication(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        // The reader would wait 60 s; alice's policy allows an authentication 10 s (behind the gate, root's
        // 180 tightened by hers). At 10 s the command ends: 75, nothing counted.
        m.asRoot("sed -i 's/timeout=10/timeout=60/' /etc/pam.d/vaultctl")
        let config = "\(m.home("alice"))/.config/vaultctl"
        m.asRoot("mkdir -p \(config) && echo '{\"version\": 1, \"prompt\": {\"authenticationSeconds\": 10}}' > \(config)/policy.json && chown -R alice: \(m.home("alice"))/.config && chmod 700 \(config) && chmod 600 \(config)/policy.json")
        let started = Date()
        let late = read(path, "mail")
        let took = Date().timeIntervalSince(started)
        #expect(late.status == 75 && late.stdout.isEmpty && late.stderr.contains("did not finish within"), "\(late)")
        #expect(took < 30, "ended at its bound, not the reader's: \(took) s")
        #expect(!gateOrStateLog(path).contains("\"result\":\"failed\""), "a bound that passed is no failed guess")
        m.scanSoon("alice-finger")
        let then = read(path, "mail")
        #expect(then.status == 0 && then.stdoutText == "s3cret", "\(then)")
    }

    @Test(arguments: Path.allCases)
    func aRemoteSessionIsRefusedByTheModuleItself(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        // An ssh server in the session's parents (a shell named sshd): the origin check judges it remote and
        // tells PAM (PAM_RHOST), and pam_fprintd will not take a finger on this machine's reader for a
        // person elsewhere, even when one is put there.
        let sshd = "\(m.folder)/sshd"
        m.asRoot("cp /bin/bash \(sshd) && chmod 755 \(sshd)")
        m.scanSoon("alice-finger")
        let remote = m.run("alice", ["-c", "\(vaultctl(path)) read mail; exit $?"], program: sshd,
                           environment: ["SSH_CONNECTION": "203.0.113.9 50000 192.168.1.2 22"], timeout: .seconds(40))
        #expect(remote.status != 0 && remote.stdout.isEmpty, "\(remote)")
        #expect(!remote.stderr.contains("Swipe"), "the reader was not even asked: \(remote)")
        #expect(remote.stderr.contains("this session is remote"), "\(remote)")
    }
}
