#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Presence on every read: a fingerprint (pam_fprintd, the real fprintd with libfprint's virtual reader) in
/// the `vaultctl` PAM stack, through the gate and through the unprotected path, on a machine of its own
/// (`GateMachine`, with `scripts/fprintd-virtual.sh`). alice's right index finger is `alice-finger`.
@Suite(.serialized, .enabled(if: GateMachine.canRunFingerprintReader, "needs root and fprintd, libpam-fprintd, python3-dbusmock ('make deps')"),
       .tags(.needsRoot, .needsServices))
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
        #expect(late.status == 75 && late.stdout.isEmpty, "\(late)")
        // Ended by the bound of the process that runs PAM (the gate's own, behind the gate), not by vaultctl's
        // wait, which is longer, nor the reader's.
        #expect(late.stderr.contains(path == .gate ? "did not finish within its bound" : "did not finish within 10 s"), "\(late)")
        #expect(took < 16, "ended at its bound, not the reader's: \(took) s")
        #expect(m.asRoot("for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = '\(m.gate)' ] && exit 1; done; exit 0").status == 0,
                "no gate left waiting")
        #expect(!gateOrStateLog(path).contains("\"result\":\"failed\""), "a bound that passed is no failed guess")
        m.scanSoon("alice-finger")
        let then = read(path, "mail")
        #expect(then.status == 0 && then.stdoutText == "s3cret", "\(then)")
        if path == .gate { #expect(gateFailures("alice") == 0, "a bound that passed is no failure") }
    }

    /// A security key through pam_u2f's `manual` mode (this kernel has no /dev/uhid, so no virtual FIDO
    /// device can exist): the module shows its challenge (challenge, origin, key handle) as a message and asks
    /// "Response #1: " four times, echo on. The answers come from an askpass program that plays the key: a
    /// P-256 key enrolled in root's /etc/vaultctl/u2f_mappings signs authenticator data (the origin's hash,
    /// the user-presence flag, a counter) and the challenge. It sees the challenge in vaultctl's standard error,
    /// as a person would on the terminal. This proves the conversation; production stacks never use `manual`.
    func securityKey(_ path: Path, presence: Bool) throws -> (ProcessResult, String) {
        let dir = "\(m.folder)/u2f-\(path.rawValue)"
        let key = [
            "import base64, os",
            "from cryptography.hazmat.primitives.asymmetric import ec",
            "from cryptography.hazmat.primitives import serialization",
            "d = os.environ['U2F_DIR']",
            "k = ec.generate_private_key(ec.SECP256R1())",
            "open(d + '/key.pem', 'wb').write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))",
            "n = k.public_key().public_numbers()",
            "pk = base64.b64encode(n.x.to_bytes(32, 'big') + n.y.to_bytes(32, 'big')).decode()",
            "kh = base64.b64encode(os.urandom(64)).decode()",
            "print('alice:%s,%s,es256,+presence' % (kh, pk))",
        ].joined(separator: "\n") + "\n"
        let answer = [
            "#!/usr/bin/python3",
            "import base64, hashlib, os, re, sys",
            "from cryptography.hazmat.primitives.asymmetric import ec",
            "from cryptography.hazmat.primitives import hashes, serialization",
            "d = os.environ['U2F_DIR']",
            "try: n = int(open(d + '/count').read())",
            "except OSError: n = 0",
            "open(d + '/count', 'w').write(str(n + 1))",
            "m = re.search(r'vaultctl: (\\S+) (pam://\\S+) (\\S+)', open(d + '/stderr').read())",
            "if not m or 'Response #1' not in sys.argv[1]: sys.exit(1)",
            "challenge, origin = base64.b64decode(m.group(1)), m.group(2)",
            "if n % 4 < 2: print('unused'); sys.exit(0)  # the client data hash and the relying party: not read",
            "flags = 0x01 if os.environ.get('U2F_PRESENCE') == '1' else 0x00",
            "authdata = hashlib.sha256(origin.encode()).digest() + bytes([flags]) + (7).to_bytes(4, 'big')",
            "if n % 4 == 2: print(base64.b64encode(bytes([0x58, len(authdata)]) + authdata).decode()); sys.exit(0)",
            "k = serialization.load_pem_private_key(open(d + '/key.pem', 'rb').read(), None)",
            "print(base64.b64encode(k.sign(authdata + challenge, ec.ECDSA(hashes.SHA256()))).decode())",
        ].joined(separator: "\n") + "\n"
        m.asRoot("rm -rf \(dir) && mkdir -p \(dir)")
        try key.write(toFile: "\(dir)/enrol.py", atomically: true, encoding: .utf8)
        try answer.write(toFile: "\(dir)/key-askpass", atomically: true, encoding: .utf8)
        // Root enrols the key in the central mapping file, and the shipped stack runs in manual mode.
        let enrol = m.asRoot("mkdir -p /etc/vaultctl && U2F_DIR=\(dir) /usr/bin/python3 \(dir)/enrol.py > /etc/vaultctl/u2f_mappings && chmod 644 /etc/vaultctl/u2f_mappings && chown -R alice: \(dir) && chmod 755 \(dir)/key-askpass")
        try #require(enrol.status == 0, "\(enrol)")
        let shipped = "\(Paths.repositoryRoot)/policy/pam.d/vaultctl-security-key"
        m.asRoot("sed 's|u2f_mappings cue$|u2f_mappings manual origin=pam://vaultctl-test|' \(shipped) > /etc/pam.d/vaultctl")
        let r = m.run("alice", ["-c", "exec \(vaultctl(path)) read mail 2>\(dir)/stderr"], program: "/bin/sh",
                      environment: ["VAULT_ASKPASS": "\(dir)/key-askpass", "U2F_DIR": dir, "U2F_PRESENCE": presence ? "1" : "0"],
                      timeout: .seconds(40))
        return (r, (try? String(contentsOfFile: "\(dir)/stderr", encoding: .utf8)) ?? "")
    }

    @Test(arguments: Path.allCases)
    func aKeyTouchReadsAndNoTouchIsCounted(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        let (touched, said) = try securityKey(path, presence: true)
        #expect(touched.status == 0 && touched.stdoutText == "s3cret", "\(touched)\n\(said)")
        #expect(said.contains("Challenge #1:") && said.contains("pam://vaultctl-test"), "\(said)")
        // The same key, its user-presence flag not set (nobody touched it): refused and counted.
        let (untouched, words) = try securityKey(path, presence: false)
        #expect(untouched.status == 77 && untouched.stdout.isEmpty, "\(untouched)\n\(words)")
        #expect(gateOrStateLog(path).contains("\"result\":\"failed\""), "\(gateOrStateLog(path))")
    }

    @Test(arguments: Path.allCases)
    func aStackWhoseDeviceCannotBeUsedSaysSoAndCountsNothing(_ path: Path) throws {
        // bob has no finger enrolled: pam_fprintd gives up without a word. The stack is named, nothing counted.
        #expect(m.run("bob", ["store", "mail"], program: vaultctl(path), stdin: .text("b")).status == 0)
        let r = m.run("bob", ["read", "mail"], program: vaultctl(path), timeout: .seconds(40))
        #expect(r.status == 78 && r.stdout.isEmpty && r.stderr.contains("the PAM stack asks for a fingerprint"), "\(r)")
        let log = path == .gate ? m.gateLog("bob") : m.asRoot("cat \(m.home("bob"))/.local/state/vaultctl/audit.log 2>/dev/null").stdoutText
        #expect(!log.contains("\"result\":\"failed\""), "\(log)")
    }

    /// A module that asks everything in one conversation call (PAM allows several messages a call): a message,
    /// an error with an escape sequence in it, a PIN with echo off, "press ENTER" with echo on. Built here
    /// and named by absolute path in the stack (root's, in a folder only root writes).
    func multiMessageStack() throws {
        let source = """
            #include <security/pam_modules.h>
            #include <security/pam_appl.h>
            #include <stdlib.h>
            #include <string.h>
            int pam_sm_authenticate(pam_handle_t *h, int flags, int argc, const char **argv) {
                const struct pam_conv *conv;
                if (pam_get_item(h, PAM_CONV, (const void **)&conv) != PAM_SUCCESS) return PAM_SYSTEM_ERR;
                struct pam_message m[4] = {
                    {PAM_TEXT_INFO, "Touch the sensor, then"}, {PAM_ERROR_MSG, "last try failed\\033[31m red"},
                    {PAM_PROMPT_ECHO_OFF, "PIN: "}, {PAM_PROMPT_ECHO_ON, "Insert your FIDO authenticator, then press ENTER."}};
                const struct pam_message *p[4] = {&m[0], &m[1], &m[2], &m[3]};
                struct pam_response *r = NULL;
                if (conv->conv(4, p, &r, conv->appdata_ptr) != PAM_SUCCESS || r == NULL) return PAM_CONV_ERR;
                int ok = r[2].resp && strcmp(r[2].resp, "1234") == 0 && r[3].resp && r[3].resp[0] == 0;
                for (int i = 0; i < 4; i++) free(r[i].resp);
                free(r);
                return ok ? PAM_SUCCESS : PAM_AUTH_ERR;
            }
            int pam_sm_setcred(pam_handle_t *h, int flags, int argc, const char **argv) { return PAM_SUCCESS; }
            int pam_sm_acct_mgmt(pam_handle_t *h, int flags, int argc, const char **argv) { return PAM_SUCCESS; }
            """
        let folder = "\(m.folder)/module"
        m.asRoot("rm -rf \(folder) && mkdir -m 0755 \(folder)")
        try source.write(toFile: "\(folder)/multi.c", atomically: true, encoding: .utf8)
        let cc = m.asRoot("cc -shared -fPIC -o \(folder)/pam_multi.so \(folder)/multi.c && chmod 0644 \(folder)/pam_multi.so")
        try #require(cc.status == 0, "\(cc)")
        m.asRoot("printf 'auth required \(folder)/pam_multi.so\\naccount required pam_permit.so\\n' > /etc/pam.d/vaultctl")
    }

    @Test(arguments: Path.allCases)
    func severalMessagesInOneCallEachAnsweredInTurn(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        try multiMessageStack()
        // --password-stdin: a line for each question, none for the messages (the ENTER is an empty line).
        let r = m.run("alice", ["read", "mail", "--password-stdin"], program: vaultctl(path), stdin: .text("1234\n\n"))
        #expect(r.status == 0 && r.stdoutText == "s3cret", "\(r)")
        #expect(r.stderr.contains("vaultctl: Touch the sensor, then\n") && r.stderr.contains("vaultctl: last try failed [31m red\n"), "\(r)")
        #expect(!r.stderr.contains("\u{1B}"), "no escape sequence reaches the terminal: \(r)")
        // A wrong PIN is a wrong guess: counted.
        let wrong = m.run("alice", ["read", "mail", "--password-stdin"], program: vaultctl(path), stdin: .text("0000\n\n"))
        #expect(wrong.status == 77 && wrong.stdout.isEmpty, "\(wrong)")
        #expect(gateOrStateLog(path).contains("\"result\":\"failed\""))
    }

    /// The gate's failures in its rate-limit state (`ratelimit.json`), once the next attempt has settled them.
    func gateFailures(_ user: String) -> Int {
        let limit = m.asRoot("cat /var/lib/vaultctl/\(m.uid(user))/ratelimit.json").stdoutText
        let failures = limit.components(separatedBy: "\"failures\":[").dropFirst().first?.prefix { $0 != "]" } ?? ""
        return failures.split(separator: ",").count
    }

    /// Sends `signal` to the gate once it waits for a finger; whether it was seen.
    func signalGateWaitingForFinger(_ signal: String) -> Bool {
        // Up to 20 s: on a loaded machine (the whole suite beside it, 2 cores) vaultctl and the gate may take
        // more than the 5 s this once allowed to start in the namespace (seen once in a full run).
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            usleep(100_000)
            let r = m.asRoot("for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = '\(m.gate)' ] && grep -q '^State:.*S' $p/status && sleep 0.5 && kill -\(signal) ${p#/proc/} && exit 0; done; exit 1")
            if r.status == 0 { return true }
        }
        return false
    }

    /// Whether a vaultctl-gate runs in the machine; true when that could not be looked at.
    func gateRuns() -> Bool {
        m.asRoot("for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = '\(m.gate)' ] && echo running && exit 0; done; echo none")
            .stdoutText != "none\n"
    }

    /// A fingerprint stack answers no question, so the gate's place counts from the moment it is taken: a
    /// program that kills the gate when it learns (from fprintd's broadcast, or the relayed "Failed to match")
    /// that a finger did not match gets no free guess. A Ctrl-C is the terminal's and counts nothing: the gate
    /// ignores it, finds vaultctl gone, and gives its place back.
    @Test func aGateKilledWhileItWaitsForAFingerCountsAndACtrlCDoesNot() async throws {
        #expect(m.run("alice", ["store", "mail"], program: m.vaultctl, stdin: .text("s3cret")).status == 0)
        let m = self.m
        let killed = Task.detached { m.run("alice", ["read", "mail"], program: m.vaultctl, timeout: .seconds(40)) }
        #expect(signalGateWaitingForFinger("9"), "the gate was never seen waiting")
        let k = await killed.value
        #expect(k.status != 0 && k.stdout.isEmpty, "\(k)")
        m.scanSoon("alice-finger")
        #expect(read(.gate, "mail").stdoutText == "s3cret")
        #expect(gateFailures("alice") == 1, "a gate killed mid-authentication counts")

        let interrupted = Task.detached { m.run("alice", ["read", "mail"], program: m.vaultctl, timeout: .seconds(40)) }
        #expect(signalGateWaitingForFinger("INT"), "the gate was never seen waiting")
        m.asRoot("pkill -INT -f '\(m.vaultctl) read mail' ; true")
        _ = await interrupted.value
        // The gate ends at pam_fprintd's own timeout (10 s) and gives the place back.
        #expect(Wait.until(seconds: 20, interval: 0.2) { !gateRuns() }, "the gate outlived pam_fprintd's 10 s")
        m.scanSoon("alice-finger")
        #expect(read(.gate, "mail").stdoutText == "s3cret")
        #expect(gateFailures("alice") == 1, "a Ctrl-C counted as a failure")
    }

    /// A grant opens one read: a program holding the gate's exchange open cannot go on reading on one finger.
    @Test func oneFingerOpensOneReadOfTheSlot() throws {
        #expect(m.run("alice", ["store", "mail"], program: m.vaultctl, stdin: .text("s3cret")).status == 0)
        // A client of the gate's own protocol, as any program running as alice could be: two reads on one exchange.
        let client = try m.script("two-reads", "printf 'request 11\\n1 read mail' ; sleep 3 ; printf 'request 11\\n1 read mail' ; sleep 12")
        m.scanSoon("alice-finger")
        let r = m.run("alice", ["-c", "\(client) | \(m.gate) | tr -c '[:print:]\\n' '.'"], program: "/bin/sh", timeout: .seconds(40))
        let okCount = r.stdoutText.components(separatedBy: "ok 6").count - 1
        #expect(okCount == 1, "one finger, one read: \(r) \(r.stdoutText.debugDescription)")
        #expect(r.stdoutText.components(separatedBy: "Swipe your right index finger").count - 1 == 2, "the second read asked again: \(r)")
    }

    /// A stack with more than one try: a wrong finger, then nothing until pam_fprintd gives up. It reported the
    /// failure, so the attempt counts, even though the module's last word is "no finger in time".
    @Test(arguments: Path.allCases)
    func aWrongFingerThenNoneCountsWithSeveralTries(_ path: Path) throws {
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        m.asRoot("sed -i 's/max-tries=1/max-tries=2/' /etc/pam.d/vaultctl")
        m.scanSoon("bob-finger")
        let r = read(path, "mail")
        #expect(r.status == 77 && r.stdout.isEmpty && r.stderr.contains("Failed to match fingerprint"), "\(r)")
        #expect(gateOrStateLog(path).contains("\"result\":\"failed\""), "\(gateOrStateLog(path))")
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
