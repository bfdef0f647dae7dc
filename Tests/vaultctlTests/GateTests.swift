#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import Slots
import TestSupport

/// Protected mode: the device slot, rate limit, vault lock and audit log behind the set-group-ID
/// `vaultctl-gate`, on a machine where it is installed as `make install` puts it (`GateMachine`), with a real
/// PAM stack. Each test is an attack that programs running as the user could make, and must fail closed.
@Suite(.serialized, .enabled(if: GateMachine.canRun, "needs root: a mount namespace, users and a set-group-ID file"), .tags(.needsRoot))
final class GateTests {
    static let shared = Result { try GateMachine.start() }
    let m: GateMachine

    init() throws {
        m = try Self.shared.get()
        m.reset()
    }

    func store(_ user: String, _ slot: String, _ value: String, askpass: String? = nil) -> ProcessResult {
        m.run(user, ["store", slot], stdin: .text(value), environment: askpass.map { ["VAULT_ASKPASS": $0] } ?? [:])
    }

    func read(_ user: String, _ slot: String, password: String, program: String? = nil,
              environment: [String: String] = [:], wrap: [String] = []) -> ProcessResult {
        m.run(user, ["read", slot, "--password-stdin"], program: program, stdin: .text(password + "\n"),
              environment: environment, wrap: wrap)
    }

    @Test func aReadNeedsTheUsersOwnPasswordAndTheValueLivesOnlyBehindTheGate() throws {
        let stored = store("alice", "mail", "s3cret")
        #expect(stored.status == 0, "\(stored)")
        let good = read("alice", "mail", password: "alice-pw")
        #expect(good.status == 0 && good.stdoutText == "s3cret", "\(good)")
        let bobsPassword = read("alice", "mail", password: "bob-pw")
        #expect(bobsPassword.status == 77 && bobsPassword.stdout.isEmpty, "\(bobsPassword)")
        #expect(bobsPassword.stderr.contains("Authentication failed"), "\(bobsPassword)")

        // Nothing of the vault is in alice's state folder, and alice cannot reach the store.
        let uid = m.uid("alice")
        let files = m.asRoot("find \(m.home("alice")) -type f -printf '%f\\n' | sort").stdoutText
        #expect(!files.contains("device.key") && !files.contains("mail"), "\(files)")
        for attempt in ["cat /var/lib/vaultctl/\(uid)/device.key", "ls /var/lib/vaultctl", "cat /var/lib/vaultctl/\(uid)/slots/mail",
                        "rm -f /var/lib/vaultctl/\(uid)/ratelimit.json", "cp -r /var/lib/vaultctl/\(uid) /tmp/copy"] {
            let r = m.run("alice", ["-c", attempt], program: "/bin/sh")
            #expect(r.status != 0 && r.stderr.contains("Permission denied"), "\(attempt): \(r)")
        }
        // The gate's log says what happened, and the status says which boundary holds.
        let log = m.gateLog("alice")
        #expect(log.contains("\"command\":\"store\"") && log.contains("\"command\":\"read\",\"origin\""), "\(log)")
        #expect(log.contains("\"result\":\"failed\""), "\(log)")
        let status = m.run("alice", ["status", "mail", "--json"])
        #expect(status.status == 0 && status.stdoutText.contains("\"boundary\":\"gate\""), "\(status)")
        // `log` shows the gate's log, whatever state folder the caller names.
        let shown = m.run("alice", ["log", "--json"], environment: ["XDG_STATE_HOME": "\(m.home("alice"))/elsewhere"])
        #expect(shown.status == 0 && shown.stdoutText.contains("\"command\":\"read\",\"slot\":\"mail\""), "\(shown)")
        #expect(shown.stdoutText.contains("\"result\":\"failed\""), "\(shown)")
    }

    @Test func aReadWhoseRecordedSlotWasEmptiedAsksNothingAndLooksAtBothSlots() throws {
        // A read whose record names the device slot is one request to the gate (lock, rate limit, PAM, line,
        // value). When the value is gone, the gate says so before any prompt, and the read looks at both
        // slots as any read does: here the sync slot cannot be asked (no bus), so 69, and no password used.
        #expect(store("alice", "mail", "s3cret").status == 0)
        #expect(store("alice", "other", "x").status == 0)
        m.asRoot("rm /var/lib/vaultctl/\(m.uid("alice"))/slots/mail")
        let before = m.gateLog("alice")
        let gone = read("alice", "mail", password: "alice-pw")
        #expect(gone.status == 69 && gone.stdout.isEmpty && gone.stderr.contains("the Secret Service could not be asked"), "\(gone)")
        let lines = m.gateLog("alice").dropFirst(before.count)
        #expect(!lines.contains("\"command\":\"authenticate\""), "no authentication for a value that is not there: \(lines)")
        // One request, one prompt, the same lines as before: an authentication, then the read.
        let good = read("alice", "other", password: "alice-pw")
        #expect(good.status == 0 && good.stdoutText == "x", "\(good)")
        let after = m.gateLog("alice").dropFirst(before.count)
        let entries = after.split(separator: "\n")
        #expect(entries.count == 2 && entries[0].contains("\"command\":\"authenticate\"") && entries[0].contains("\"reason\":\"read slot 'other'\"")
                && entries[1].contains("\"command\":\"read\"") && entries[1].contains("\"slot\":\"other\""), "\(after)")
    }

    @Test func anLDPreloadShimThatSaysYesToPAMGetsNothingFromTheGate() throws {
        let shimSource = try m.script("shim.c", "")
        try "int pam_authenticate(void *h, int f) { return 0; }\nint pam_acct_mgmt(void *h, int f) { return 0; }\n"
            .write(toFile: shimSource, atomically: true, encoding: .utf8)
        let shim = "\(m.folder)/shim.so"
        let cc = ProcessRunner.run("/usr/bin/cc", ["-shared", "-fPIC", "-o", shim, shimSource], environment: Fixtures.baseEnvironment)
        try #require(cc.status == 0, "\(cc)")
        chmod(shim, 0o755)

        // The control: without the gate (the same binary, no gate beside it), the shim reads with any password.
        let plainState = ["XDG_STATE_HOME": "\(m.home("alice"))/plain-state", "XDG_CONFIG_HOME": "\(m.home("alice"))/plain-config"]
        #expect(m.run("alice", ["store", "mail"], program: m.plainVaultctl, stdin: .text("s3cret"), environment: plainState).status == 0)
        var env = plainState
        env["LD_PRELOAD"] = shim
        let control = read("alice", "mail", password: "anything", program: m.plainVaultctl, environment: env)
        #expect(control.status == 0 && control.stdoutText == "s3cret", "the shim must work where nothing stops it: \(control)")

        // Protected: the gate runs PAM, and the loader ignores LD_PRELOAD in a set-group-ID program.
        #expect(store("alice", "mail", "s3cret").status == 0)
        let attack = read("alice", "mail", password: "anything", environment: ["LD_PRELOAD": shim])
        #expect(attack.status == 77 && attack.stdout.isEmpty, "\(attack)")
        #expect(m.gateLog("alice").contains("\"result\":\"failed\""))
    }

    @Test func theGateRefusesToRunWhenTheKernelDidNotRaiseItsGroup() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let nnp = read("alice", "mail", password: "alice-pw", wrap: ["/usr/bin/setpriv", "--no-new-privs", "--"])
        #expect(nnp.status == 69 && nnp.stdout.isEmpty && nnp.stderr.contains("no_new_privs is set"), "\(nnp)")
        if access("/usr/bin/strace", X_OK) == 0 {
            let traced = read("alice", "mail", password: "alice-pw", wrap: ["/usr/bin/strace", "-f", "-o", "/dev/null", "--"])
            #expect(traced.status == 69 && traced.stdout.isEmpty && traced.stderr.contains("a tracer"), "\(traced)")
        }
        // Not a quiet return to the state folder: even a status says the vault cannot be looked at.
        let status = m.run("alice", ["status", "mail"], wrap: ["/usr/bin/setpriv", "--no-new-privs", "--"])
        #expect(status.status == 69 && status.stderr.contains("vaultctl-gate"), "\(status)")
    }

    /// A gate that refuses ends status at once: the Secret Service's look (a bus that never answers here,
    /// whose own bound is 5 s), started beside the gate's start-up, is not waited for.
    @Test func aRefusingGateEndsStatusWithoutWaitingForTheSecretServiceLook() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let bus = try SilentBus()
        chmod(Paths.folder(of: bus.path), 0o755)
        chmod(bus.path, 0o777)
        let status = m.run("alice", ["status", "mail"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
                           wrap: ["/usr/bin/setpriv", "--no-new-privs", "--"])
        #expect(status.status == 69 && status.stderr.contains("no_new_privs is set"), "\(status)")
        #expect(status.elapsed < .seconds(3), "\(status.elapsed)")
        // With the gate in effect the same look is waited for, within its bound, and said to be unknown.
        let hung = m.run("alice", ["status", "mail"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(hung.status == 0 && hung.stdoutText.contains("not ruled out"), "\(hung)")
        #expect(hung.elapsed < .seconds(15), "\(hung.elapsed)")
    }

    @Test func bobNeverReachesAlicesSlots() throws {
        #expect(store("alice", "mail", "alice's").status == 0)
        // Bob's gate looks in bob's folder only: his device slot is empty (and his keyring, here, unreachable).
        let bob = read("bob", "mail", password: "bob-pw")
        #expect(bob.status == 69 && bob.stdout.isEmpty && bob.stderr.contains("the Secret Service could not be asked"), "\(bob)")
        let direct = m.run("bob", ["-c", "cat /var/lib/vaultctl/\(m.uid("alice"))/slots/mail"], program: "/bin/sh")
        #expect(direct.status != 0 && direct.stderr.contains("Permission denied"), "\(direct)")
        // Bob's own store is his, beside alice's.
        #expect(store("bob", "mail", "bob's").status == 0)
        #expect(read("bob", "mail", password: "bob-pw").stdoutText == "bob's")
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "alice's")
    }

    @Test func failuresAreCountedByTheGateWhateverTheStateFolderSays() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        for _ in 0..<3 { _ = read("alice", "mail", password: "wrong") }
        let blocked = read("alice", "mail", password: "alice-pw")
        #expect(blocked.status == 75 && blocked.stdout.isEmpty && blocked.stderr.contains("blocked"), "\(blocked)")
        // A state folder of another's choosing holds no rate limit the gate reads.
        let elsewhere = read("alice", "mail", password: "alice-pw", environment: ["XDG_STATE_HOME": "\(m.home("alice"))/empty", "XDG_CONFIG_HOME": "\(m.home("alice"))/empty"])
        #expect(elsewhere.status == 75 && elsewhere.stdout.isEmpty, "\(elsewhere)")
        // Bob is not blocked by alice's failures.
        #expect(store("bob", "mail", "b").status == 0)
        #expect(read("bob", "mail", password: "bob-pw").status == 0)
    }

    @Test func theUsersPolicyMayTightenTheRateLimitAndNeverLoosenIt() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let config = "\(m.home("alice"))/.config/vaultctl"
        func userPolicy(_ failures: Int) {
            m.asRoot("mkdir -p \(config) && echo '{\"version\": 1, \"rateLimit\": {\"failures\": \(failures)}}' > \(config)/policy.json && chown -R alice: \(m.home("alice"))/.config && chmod 700 \(config) && chmod 600 \(config)/policy.json")
        }
        userPolicy(100)
        // What policy check says is in effect is what the gate does: root's numbers, not the user's looser ones.
        let check = m.run("alice", ["policy", "check"])
        #expect(check.status == 0 && check.stdoutText.contains("rate limit:    3 failures"), "\(check)")
        for _ in 0..<3 { _ = read("alice", "mail", password: "wrong") }
        let blocked = read("alice", "mail", password: "alice-pw")
        #expect(blocked.status == 75, "root's three failures hold whatever the user's policy says: \(blocked)")

        m.reset()
        #expect(store("alice", "mail", "s3cret").status == 0)
        userPolicy(1)
        #expect(m.run("alice", ["policy", "check"]).stdoutText.contains("rate limit:    1 failures"))
        _ = read("alice", "mail", password: "wrong")
        let tighter = read("alice", "mail", password: "alice-pw")
        #expect(tighter.status == 75, "the user's one failure holds: \(tighter)")

        // Root's looser numbers hold for a user with no policy of their own (no file tightens nothing).
        m.reset()
        m.asRoot("mkdir -p /etc/vaultctl && echo '{\"version\": 1, \"rateLimit\": {\"failures\": 5}}' > /etc/vaultctl/policy.json && chmod 644 /etc/vaultctl/policy.json")
        defer { m.asRoot("rm -f /etc/vaultctl/policy.json") }
        #expect(store("alice", "mail", "s3cret").status == 0)
        for _ in 0..<3 { _ = read("alice", "mail", password: "wrong") }
        let fourth = read("alice", "mail", password: "alice-pw")
        #expect(fourth.status == 0 && fourth.stdoutText == "s3cret", "root's five failures, not the built-in three: \(fourth)")
        // A user's policy that would loosen the change gates: policy check says they stay on, as the gate keeps them.
        m.asRoot("mkdir -p \(config) && echo '{\"version\": 1, \"gate\": {\"storeOver\": false, \"delete\": false}}' > \(config)/policy.json && chown -R alice: \(m.home("alice"))/.config && chmod 700 \(config) && chmod 600 \(config)/policy.json")
        let gates = m.run("alice", ["policy", "check"])
        // (A user's file is a whole policy: the rate limit it leaves out is the built-in three, tighter than root's five.)
        #expect(gates.stdoutText.contains("rate limit:    3 failures") && gates.stdoutText.contains("password before a store over a value: yes; before a delete: yes"), "\(gates)")

        // What this side judges follows the same policy: a user's file that allows supply by default does not,
        // where root's (here the built-in one) does not.
        m.asRoot("echo '{\"version\": 1, \"slotDefaults\": {\"allowSupply\": true}}' > \(config)/policy.json")
        let status = m.run("alice", ["status", "mail", "--json"])
        #expect(status.stdoutText.contains("\"allowSupply\":false"), "\(status)")
    }

    @Test func theVaultLockIsTheGatesOwnMarker() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let lock = m.run("alice", ["lock"])
        #expect(lock.status == 0, "\(lock)")
        let locked = read("alice", "mail", password: "alice-pw")
        #expect(locked.status == 77 && locked.stderr.contains("locked"), "\(locked)")
        let elsewhere = read("alice", "mail", password: "alice-pw", environment: ["XDG_STATE_HOME": "\(m.home("alice"))/nowhere"])
        #expect(elsewhere.status == 77 && elsewhere.stdout.isEmpty, "\(elsewhere)")
        let wrong = m.run("alice", ["unlock", "--password-stdin"], stdin: .text("wrong\n"))
        #expect(wrong.status == 77, "\(wrong)")
        let unlock = m.run("alice", ["unlock", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(unlock.status == 0, "\(unlock)")
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "s3cret")
    }

    @Test func fourParallelWrongPasswordsReachPAMOnlyThreeTimes() async throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        // Each answer is slow to come, so all four hold a place at once.
        let slow = try m.script("slow-wrong", "sleep 1; echo wrong")
        let m = self.m
        let results = await withTaskGroup(of: ProcessResult.self) { group in
            for _ in 0..<4 {
                group.addTask { m.run("alice", ["read", "mail"], environment: ["VAULT_ASKPASS": slow]) }
            }
            var all: [ProcessResult] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.allSatisfy { $0.stdout.isEmpty }, "\(results)")
        let failed = m.gateLog("alice").split(separator: "\n").filter { $0.contains("\"result\":\"failed\"") }
        #expect(failed.count == 3, "\(m.gateLog("alice"))\n\(results)")
        #expect(results.filter { $0.status == 75 }.count == 1, "\(results)")
    }

    @Test func noVariableOfTheCallerReachesTheGate() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        // Both gates wait until root has seen them (the askpass and the hand-started gate's input are held).
        let seeing = m.signal("seen-both")
        let slow = try m.script("slow-right", "\(GateMachine.heldUntil(seeing)); echo alice-pw")
        let env = ["VAULT_ASKPASS": slow, "SWIFT_DETERMINISTIC_HASHING": "1", "SWIFT_BACKTRACE": "enable=yes",
                   "LD_LIBRARY_PATH": "/tmp", "GCONV_PATH": "/tmp", "MARKER_OF_THE_CALLER": "1", "LANG": "C.UTF-8"]
        let m = self.m
        // Through vaultctl, and started by hand with everything set (its input held open until released). Each
        // on a thread of its own: both block until the release, which tasks of the concurrency pool (as many
        // as cores, 2 in CI) could wait for only with this test's body.
        let direct = m.environment("alice", env).map { "\($0.key)=\($0.value)" }
        let running = BackgroundThread.later { m.run("alice", ["read", "mail"], environment: env) }
        let byHand = BackgroundThread.later {
            m.run("alice", ["-c", "(\(GateMachine.heldUntil(seeing))) | env \(direct.map { "'\($0)'" }.joined(separator: " ")) '\(m.gate)' anything >/dev/null"], program: "/bin/sh")
        }
        // While the gates wait, root reads the environment of each (its image in memory).
        var seen: [String: String] = [:]
        for _ in 0..<100 where seen.count < 2 {
            usleep(100_000)
            let found = m.asRoot("for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = '\(m.gate)' ] && echo \"== $p\" && tr '\\0' '\\n' < $p/environ; done")
            for block in found.stdoutText.components(separatedBy: "== ").dropFirst() {
                let lines = block.split(separator: "\n")
                // Nothing after the pid: the gate ended between the shell's readlink and its read of environ
                // (an ended process's environ reads empty), not an environment it ran with.
                if let pid = lines.first, lines.count > 1 { seen[String(pid)] = lines.dropFirst().joined(separator: "\n") }
            }
        }
        m.release(seeing)
        let r = running.value()
        _ = byHand.value()
        #expect(r.status == 0 && r.stdoutText == "s3cret", "\(r)")
        #expect(seen.count >= 2, "both gates should have been seen waiting: \(seen)")
        for (pid, environ) in seen {
            let names = Set(environ.split(separator: "\n").map { String($0.prefix { $0 != "=" }) })
            #expect(names.isSubset(of: ["PATH", "LANG", "LANGUAGE", "LC_MESSAGES"]), "\(pid): \(environ)")
            #expect(environ.contains("LANG=C.UTF-8") && environ.contains("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), "\(pid): \(environ)")
        }
    }

    @Test func aGateKilledAfterTheAnswerWentInCountsAsAFailure() async throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        // A stack that takes its time after the password (as a slow module would): the answer is in, the
        // verdict is not.
        // The module waits long, and the test looks for as long: on a loaded machine (the whole suite runs in
        // parallel on 2 cores) the gate may reach the module seconds late; once seen, it is killed at once.
        m.asRoot("cp /etc/pam.d/vaultctl /etc/pam.d/vaultctl.saved && echo 'auth required pam_exec.so quiet /bin/sleep 20' >> /etc/pam.d/vaultctl")
        defer { m.asRoot("mv /etc/pam.d/vaultctl.saved /etc/pam.d/vaultctl") }
        let m = self.m
        let running = Task.detached { m.run("alice", ["read", "mail", "--password-stdin"], stdin: .text("wrong\n")) }
        var killed = false
        let lookUntil = ContinuousClock.now + .seconds(18)
        while !killed && ContinuousClock.now < lookUntil {
            usleep(100_000)
            // The gate's child is the module's sleep: then the answer has gone in.
            let r = m.asRoot("for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = '\(m.gate)' ] && pgrep -P ${p#/proc/} -x sleep >/dev/null && kill -9 ${p#/proc/} && exit 0; done; exit 1")
            killed = r.status == 0
        }
        let r = await running.value
        #expect(killed, "the gate was never seen waiting for its module")
        #expect(r.status != 0 && r.stdout.isEmpty, "\(r)")
        m.asRoot("mv /etc/pam.d/vaultctl.saved /etc/pam.d/vaultctl && cp /etc/pam.d/vaultctl /etc/pam.d/vaultctl.saved")
        // The next attempt finds the dead attempt's place and counts it.
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "s3cret")
        let limit = m.asRoot("cat /var/lib/vaultctl/\(m.uid("alice"))/ratelimit.json").stdoutText
        let failures = limit.components(separatedBy: "\"failures\":[").dropFirst().first?.prefix { $0 != "]" } ?? ""
        #expect(failures.split(separator: ",").count == 1, "\(limit)")
    }

    /// A vault made before the gate (here by the same binary with no gate beside it) in alice's state folder.
    func vaultFromBeforeTheGate(_ values: [(String, String)]) {
        for (slot, value) in values {
            let r = m.run("alice", ["store", slot], program: m.plainVaultctl, stdin: .text(value))
            #expect(r.status == 0, "\(r)")
        }
    }

    var stateFiles: String {
        m.asRoot("cd \(m.home("alice"))/.local/state/vaultctl 2>/dev/null && find . -type f | sort").stdoutText
    }

    @Test func protectMovesAVaultFromBeforeTheGateBehindIt() throws {
        vaultFromBeforeTheGate([("a", "aaa"), ("b", "bbb")])
        // Until it is moved, the vault from before is used, and status says the gate is not in effect for it.
        let before = m.run("alice", ["status", "a", "--json"])
        #expect(before.stdoutText.contains("\"boundary\":\"not-in-effect\""), "\(before)")
        #expect(before.stdoutText.contains("device-key protect"), "\(before)")
        #expect(read("alice", "a", password: "alice-pw").stdoutText == "aaa")

        let wrong = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("wrong\n"))
        #expect(wrong.status == 77, "\(wrong)")
        #expect(stateFiles.contains("./device.key") && stateFiles.contains("./slots/a"), "a refused move moves nothing: \(stateFiles)")

        let moved = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(moved.status == 0 && moved.stderr.contains("2 device slots moved behind vaultctl-gate") && moved.stderr.contains("Backups"), "\(moved)")
        #expect(!stateFiles.contains("device.key") && !stateFiles.contains("slots/"), "\(stateFiles)")
        #expect(read("alice", "a", password: "alice-pw").stdoutText == "aaa")
        #expect(read("alice", "b", password: "alice-pw").stdoutText == "bbb")
        let after = m.run("alice", ["status", "b", "--json"])
        #expect(after.stdoutText.contains("\"boundary\":\"gate\""), "\(after)")
        let again = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(again.status == 0 && again.stderr.contains("no device key or slot"), "\(again)")
        // Once protected, a gate that cannot run is an error, not the state folder again.
        let broken = m.run("alice", ["status", "a"], wrap: ["/usr/bin/setpriv", "--no-new-privs", "--"])
        #expect(broken.status == 69, "\(broken)")
    }

    @Test func aStoreWhileProtectRunsIsMovedOrRefusedNeverLeftBehind() throws {
        vaultFromBeforeTheGate([("a", "aaa")])
        let stored = m.signal("early-stored")
        let slow = try m.script("slow-protect", "\(GateMachine.heldUntil(stored)); echo alice-pw")
        let m = self.m
        // The store comes while protect waits for the password (its askpass runs, before its lock), then again
        // later; the askpass answers once the first store is done. Protect runs on a thread of its own, not a task
        // of the concurrency pool, which the suites running beside this one may keep busy.
        let protect = BackgroundThread.later { m.run("alice", ["device-key", "protect"], environment: ["VAULT_ASKPASS": slow]) }
        #expect(Wait.until(seconds: 20) { GateMachine.runs(withWord: slow) }, "protect never asked for the password")
        let early = m.run("alice", ["store", "early"], stdin: .text("eee"))
        m.release(stored)
        let done = protect.value()
        #expect(done.status == 0, "\(done)")
        let late = m.run("alice", ["store", "late"], stdin: .text("lll"))
        for (slot, value, r) in [("early", "eee", early), ("late", "lll", late)] {
            if r.status == 0 {
                #expect(read("alice", slot, password: "alice-pw").stdoutText == value, "\(slot) was stored, so it must read: \(r)")
            } else {
                #expect(r.status == 77 && r.stderr.contains("device-key protect"), "\(slot): \(r)")
            }
        }
        // A new secret never goes to the state folder while the gate is installed (issue 36, point 13): refused
        // before protect's lock as after it.
        #expect(early.status == 77 && early.stderr.contains("device-key protect"), "\(early)")
        #expect(!stateFiles.contains("slots/"), "nothing is left behind: \(stateFiles)")
    }

    /// A program running as alice, who never stored through the gate, plants a device key of its own in her
    /// state folder, so that her vault looks like one from before the gate: no new secret goes there (it would
    /// read it back with that key), and store says what to do. A real vault from before keeps its values.
    @Test func aPlantedDeviceKeyGetsNoNewSecret() throws {
        let planter = "\(m.home("alice"))/planter"
        let planted = m.run("alice", ["store", "bait"], program: m.plainVaultctl, stdin: .text("x"),
                            environment: ["XDG_STATE_HOME": "\(planter)/state", "XDG_CONFIG_HOME": "\(planter)/config"])
        #expect(planted.status == 0, "\(planted)")
        let state = "\(m.home("alice"))/.local/state/vaultctl"
        let copy = m.run("alice", ["-c", "mkdir -p \(state) && chmod 700 \(state) && cp \(planter)/state/vaultctl/device.key \(state)/"], program: "/bin/sh")
        #expect(copy.status == 0, "\(copy)")

        let stored = store("alice", "bank", "s3cret")
        #expect(stored.status == 77 && stored.stdout.isEmpty, "\(stored)")
        #expect(stored.stderr.contains("slot 'bank' would be written to your state folder") && stored.stderr.contains("vaultctl device-key protect"), "\(stored)")
        // Nor over a slot file planted beside the key, with the replace prompt turned off in a policy the same
        // program wrote (the attack on the first version of this: a replacement went through, exit 0).
        let policy = "\(m.home("alice"))/.config/vaultctl"
        let planted2 = m.run("alice", ["-c", "mkdir -p \(state)/slots \(policy) && chmod 700 \(state)/slots \(m.home("alice"))/.config \(policy) && : > \(state)/slots/bank && chmod 600 \(state)/slots/bank && printf '{\"version\": 1, \"gate\": {\"storeOver\": false}}' > \(policy)/policy.json && chmod 600 \(policy)/policy.json"], program: "/bin/sh")
        #expect(planted2.status == 0, "\(planted2)")
        let over = store("alice", "bank", "s3cret")
        #expect(over.status == 77 && over.stderr.contains("would be written to your state folder"), "\(over)")
        #expect(m.asRoot("stat -c %s \(state)/slots/bank").stdoutText == "0\n", "the planted file was written")
        m.asRoot("rm -rf \(state)/slots \(policy)")
        #expect(!stateFiles.contains("slots/"), "\(stateFiles)")
        let status = m.run("alice", ["status", "bank", "--json"])
        #expect(status.stdoutText.contains("\"boundary\":\"not-in-effect\""), "\(status)")

        // Moved behind the gate (the person's choice), the same store goes there.
        let protect = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(protect.status == 0, "\(protect)")
        #expect(store("alice", "bank", "s3cret").status == 0)
        #expect(!stateFiles.contains("device.key") && !stateFiles.contains("slots/"), "\(stateFiles)")
        #expect(read("alice", "bank", password: "alice-pw").stdoutText == "s3cret")

        // A real vault from before the gate: its values are read as before; no value is written there, a
        // replacement neither (it cannot be told from a planted one), until it is moved behind the gate.
        m.reset()
        vaultFromBeforeTheGate([("a", "aaa")])
        let askpass = try m.script("alice-askpass", "echo alice-pw")
        #expect(store("alice", "a", "aaa2", askpass: askpass).status == 77)
        #expect(store("alice", "b", "bbb").status == 77)
        #expect(read("alice", "a", password: "alice-pw").stdoutText == "aaa")
        #expect(m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n")).status == 0)
        #expect(store("alice", "a", "aaa2", askpass: askpass).status == 0)
        #expect(read("alice", "a", password: "alice-pw").stdoutText == "aaa2")
    }

    /// The store is on the system's disk, and stores of new slots need no password: one user's folder takes
    /// at most 4,096 slots and 64 MiB of slot files (issue 36, point 14). Values already there are still
    /// replaced and read.
    @Test func aUsersFolderHoldsABoundedNumberOfSlots() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let slots = "/var/lib/vaultctl/\(m.uid("alice"))/slots"
        m.asRoot("cd \(slots) && for i in $(seq 1 4095); do : > f$i; done && chown alice f* && chmod 600 f*")
        let full = store("alice", "one-more", "x")
        #expect(full.status == 77 && full.stderr.contains("holds 4096 slots") && full.stderr.contains("delete some first"), "\(full)")
        let askpass = try m.script("alice-askpass", "echo alice-pw")
        #expect(store("alice", "mail", "s3cret2", askpass: askpass).status == 0)
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "s3cret2")
        m.asRoot("rm -f \(slots)/f* && truncate -s 64M \(slots)/big && chown alice \(slots)/big && chmod 600 \(slots)/big")
        let large = store("alice", "one-more", "x")
        #expect(large.status == 77 && large.stderr.contains("take 64 MiB"), "\(large)")
        m.asRoot("rm -f \(slots)/big")
        #expect(store("alice", "one-more", "x").status == 0)
    }

    /// Killed at the step-th write of vaultctl to a file (`write`: the marker, the state folder's files) and,
    /// in a second round, at the step-th frame it sends the gate (`writev`): strace counts each system call
    /// on its own, so the two are separate rounds, each until the command is no longer reached by its kill.
    @Test(arguments: ["write", "writev"])
    func protectKilledAtAnyStepLosesNothingAndFinishesWhenRunAgain(syscall: String) throws {
        try #require(access("/usr/bin/strace", X_OK) == 0, "strace is needed to stop protect at each step")
        var killedRuns = 0
        for step in 1...60 {
            m.reset()
            vaultFromBeforeTheGate([("a", "aaa"), ("b", "bbb")])
            // SIGKILL at the step-th call, the gate left to itself.
            let run = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n"),
                            wrap: ["/usr/bin/strace", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e", "inject=\(syscall):signal=KILL:when=\(step)", "--"])
            for (slot, value) in [("a", "aaa"), ("b", "bbb")] {
                let r = read("alice", slot, password: "alice-pw")
                #expect(r.status == 0 && r.stdoutText == value, "killed at \(syscall) \(step): \(slot): \(r)")
            }
            let finish = m.run("alice", ["device-key", "protect", "--password-stdin"], stdin: .text("alice-pw\n"))
            #expect(finish.status == 0, "after a kill at \(syscall) \(step): \(finish)")
            #expect(!stateFiles.contains("device.key"), "after a kill at \(syscall) \(step): \(stateFiles)")
            for (slot, value) in [("a", "aaa"), ("b", "bbb")] {
                let r = read("alice", slot, password: "alice-pw")
                #expect(r.stdoutText == value, "after a kill at \(syscall) \(step) and a second run: \(slot): \(r); \(stateFiles)")
            }
            if run.status == 0 { break }  // the run was never reached by its kill: every step was tried
            killedRuns += 1
        }
        #expect(killedRuns >= 3, "protect should have been killed at several \(syscall) steps (\(killedRuns))")
    }

    /// The gate run by hand with a request and an answer already in its input, under RLIMIT_FSIZE (bytes).
    func gateByHand(_ user: String, answer: String, fileSizeLimit: Int) -> ProcessResult {
        let request = "1 authenticate mail read slot 'mail'"
        let frames = "request \(request.utf8.count)\n\(request)answer \(answer.utf8.count)\n\(answer)"
        return m.run(user, ["--fsize=\(fileSizeLimit)", "--", m.gate], program: "/usr/bin/prlimit", stdin: .text(frames))
    }

    /// The gate run by hand with a read request and an answer in its input, with or without the hint that
    /// the command authenticates (vaultctl gives it for commands that may ask).
    func gateReadByHand(_ user: String, answer: String, hinted: Bool) -> ProcessResult {
        let request = "1 read mail"
        let frames = "request \(request.utf8.count)\n\(request)answer \(answer.utf8.count)\n\(answer)"
        return m.run(user, hinted ? ["--authenticating"] : [], program: m.gate, stdin: .text(frames))
    }

    @Test func theHintThatACommandAuthenticatesChangesNothingARequestDoes() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        for hinted in [false, true] {
            let right = gateReadByHand("alice", answer: "alice-pw", hinted: hinted)
            #expect(right.status == 0 && right.stdoutText.contains("prompt-hidden") && right.stdoutText.hasSuffix("ok 6\ns3cret"), "hinted \(hinted): \(right)")
            let wrong = gateReadByHand("alice", answer: "wrong", hinted: hinted)
            #expect(wrong.stdoutText.contains("refused") && wrong.stdoutText.contains("authentication-failed") && !wrong.stdoutText.contains("s3cret"),
                    "hinted \(hinted): \(wrong)")
        }
        // A root policy that cannot be read: the same refusal, read once, whether it was read ahead or not.
        m.asRoot("mkdir -p /etc/vaultctl && echo '{\"version\": 1, \"rateLimit\": {\"failures\": \"x\"}}' > /etc/vaultctl/policy.json && chmod 644 /etc/vaultctl/policy.json")
        defer { m.asRoot("rm -f /etc/vaultctl/policy.json") }
        let plain = gateReadByHand("alice", answer: "alice-pw", hinted: false)
        let hinted = gateReadByHand("alice", answer: "alice-pw", hinted: true)
        #expect(plain.stdoutText.contains("refused") && !plain.stdoutText.contains("prompt-hidden"), "\(plain)")
        #expect(hinted.stdoutText == plain.stdoutText && hinted.status == plain.status, "plain: \(plain)\nhinted: \(hinted)")
    }

    @Test func aGuessWhoseFailureCannotBeRecordedGetsNoVerdictAndIsCountedLater() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        for _ in 0..<2 { #expect(read("alice", "mail", password: "alice-pw").status == 0) }  // a log of some length
        // No room at all (RLIMIT_FSIZE 0, as a full disk): no place can be taken, so nothing is asked.
        for answer in ["wrong", "alice-pw"] {
            let r = gateByHand("alice", answer: answer, fileSizeLimit: 0)
            #expect(!r.stdoutText.contains("prompt-hidden") && r.stdoutText.contains("refused"), "\(answer): \(r)")
        }
        // Room for the rate limit's place but not for the verdict's line (the log is longer than 128 bytes):
        // the same answer to a wrong and a right password, and each place stays, to be counted as a failure.
        let wrong = gateByHand("alice", answer: "wrong", fileSizeLimit: 128)
        let right = gateByHand("alice", answer: "alice-pw", fileSizeLimit: 128)
        #expect(wrong.stdoutText.contains("prompt-hidden"), "the place was taken and the person asked: \(wrong)")
        func refusal(_ r: ProcessResult) -> String { r.stdoutText.components(separatedBy: "refused").dropFirst().first ?? "" }
        #expect(refusal(wrong) == refusal(right) && !refusal(wrong).isEmpty, "wrong: \(wrong)\nright: \(right)")
        #expect(!wrong.stdoutText.contains("authentication-failed") && !right.stdoutText.contains("\nok "), "\(wrong)\n\(right)")
        _ = gateByHand("alice", answer: "wrong", fileSizeLimit: 128)
        let next = read("alice", "mail", password: "alice-pw")
        #expect(next.status == 75 && next.stderr.contains("blocked"), "three unrecorded answers count as three failures: \(next)")
    }

    @Test func theGateSealsByTheTPMRootChoseAndNeverTheCallers() throws {
        try #require(access("/usr/bin/swtpm", X_OK) == 0, "swtpm is needed (make deps)")
        let tpm = "\(m.folder)/tpm"
        let started = ProcessRunner.run(Paths.swtpmScript, ["start", tpm], environment: Fixtures.baseEnvironment)
        try #require(started.status == 0, "\(started)")
        defer { _ = ProcessRunner.run(Paths.swtpmScript, ["stop", tpm], environment: Fixtures.baseEnvironment) }
        chmod(tpm, 0o711)
        for socket in ["sock", "sock.ctrl"] { chmod("\(tpm)/\(socket)", 0o666) }  // the gate connects as alice (a test TPM; a real one is /dev/tpmrm0)
        let conf = "{\"version\": 1, \"tpm\": \"swtpm:path=\(tpm)/sock\"}"
        m.asRoot("mkdir -p /etc/vaultctl && printf '%s' '\(conf)' > /etc/vaultctl/gate.conf && chmod 644 /etc/vaultctl/gate.conf")
        defer { m.asRoot("rm -f /etc/vaultctl/gate.conf") }

        // The caller names a TPM of its own (here none that answers): the gate never hears of it.
        let callers = ["VAULTCTL_TPM2_TCTI": "swtpm:path=/nonexistent/sock"]
        let stored = m.run("alice", ["store", "mail"], stdin: .text("s3cret"), environment: callers)
        #expect(stored.status == 0, "\(stored)")
        let status = m.run("alice", ["status", "mail", "--json"], environment: callers)
        #expect(status.stdoutText.contains("\"state\":\"cannot-leave-device\"") && status.stdoutText.contains("\"binding\":\"tpm2\""), "\(status)")
        let key = m.run("alice", ["device-key", "status", "--json"], environment: callers)
        #expect(key.stdoutText.contains("\"binding\":\"tpm2\"") && key.stdoutText.contains("swtpm:path=\(tpm)/sock"), "\(key)")
        #expect(read("alice", "mail", password: "alice-pw", environment: callers).stdoutText == "s3cret")
        let files = m.asRoot("ls /var/lib/vaultctl/\(m.uid("alice"))").stdoutText
        #expect(files.contains("device.tpm2") && !files.contains("device.key"), "\(files)")
        // Made for alice's account: its key pair comes from the sealed seed and her account's id.
        let magic = m.asRoot("head -c 8 /var/lib/vaultctl/\(m.uid("alice"))/device.tpm2 | od -An -tx1").stdoutText
        #expect(magic.contains("56 43 54 4c 54 50 4d 02"), "\(magic)")

        // A gate.conf that others may write is not root's choice: refused, naming it.
        m.asRoot("chmod 666 /etc/vaultctl/gate.conf")
        let loose = m.run("alice", ["status", "mail"])
        #expect(loose.status == 78 && loose.stderr.contains("/etc/vaultctl/gate.conf"), "\(loose)")
        m.asRoot("chmod 644 /etc/vaultctl/gate.conf")

        // The TPM gone: the read says so (69), and the value waits for it.
        _ = ProcessRunner.run(Paths.swtpmScript, ["stop", tpm], environment: Fixtures.baseEnvironment)
        let gone = read("alice", "mail", password: "alice-pw")
        #expect(gone.status == 69 && gone.stdout.isEmpty, "\(gone)")
    }

    @Test func theLogCannotBeFloodedWithUnansweredPromptsNorCutMidLine() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let lines = { self.m.gateLog("alice").split(separator: "\n").count }
        let before = lines()
        // Asked and cancelled, again and again: no password, no guess, no line.
        let request = "1 authenticate - x"
        let once = "request \(request.utf8.count)\n\(request)cancel 3\nno."
        let r = m.run("alice", [], program: m.gate, stdin: .text(String(repeating: once, count: 20)))
        #expect(r.stdoutText.components(separatedBy: "prompt-hidden").count == 21, "\(r)")
        #expect(lines() == before, "\(m.gateLog("alice"))")
        // A line that does not fit (RLIMIT_FSIZE just past the log's end) is taken back whole: the next line
        // is not glued to a fragment of it.
        let size = Int(m.asRoot("stat -c %s /var/lib/vaultctl/\(m.uid("alice"))/audit.log").stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let store = "1 store junk"
        _ = m.run("alice", ["--fsize=\(size + 20)", "--", m.gate], program: "/usr/bin/prlimit",
                  stdin: .text("request \(store.utf8.count)\n\(store)secret 1\nj"))
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "s3cret")
        let log = m.gateLog("alice")
        #expect(log.hasSuffix("\n") && log.split(separator: "\n").allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "\(log)")
        let shown = m.run("alice", ["log", "--json"])
        #expect(shown.stdoutText.contains("\"command\":\"read\",\"slot\":\"mail\""), "\(shown)")
    }

    @Test func aSuppliedProgramThatFailsCountsInTheGate() throws {
        #expect(store("alice", "mail", "s3cret").status == 0)
        let allow = m.run("alice", ["allow-supply", "mail", "on", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(allow.status == 0, "\(allow)")
        for _ in 0..<2 {
            let r = m.run("alice", ["supply", "mail", "--password-stdin", "--", "/bin/sh", "-c", "cat >/dev/null; exit 1"], stdin: .text("alice-pw\n"))
            #expect(r.status != 0, "\(r)")
        }
        let limit = m.asRoot("cat /var/lib/vaultctl/\(m.uid("alice"))/ratelimit.json").stdoutText
        let failures = limit.components(separatedBy: "\"failures\":[").dropFirst().first?.prefix { $0 != "]" } ?? ""
        #expect(failures.split(separator: ",").count == 2, "\(limit)")
        // Counted in the gate, not in the state folder, which holds no failure to reset.
        #expect(!m.asRoot("cat \(m.home("alice"))/.local/state/vaultctl/ratelimit.json 2>/dev/null").stdoutText.contains("failures\":[1"))
        // The third blocks every gated command, wherever the state folder is.
        let third = m.run("alice", ["supply", "mail", "--password-stdin", "--", "/bin/sh", "-c", "cat >/dev/null; exit 1"], stdin: .text("alice-pw\n"))
        #expect(third.status != 0, "\(third)")
        let blocked = read("alice", "mail", password: "alice-pw", environment: ["XDG_STATE_HOME": "\(m.home("alice"))/elsewhere"])
        #expect(blocked.status == 75, "\(blocked)")
    }

    @Test func sealMovesAProtectedKeyUnderTheTPMRootChose() throws {
        try #require(access("/usr/bin/swtpm", X_OK) == 0, "swtpm is needed (make deps)")
        m.asRoot("mkdir -p /etc/vaultctl && printf '%s' '{\"version\": 1, \"tpm\": \"none\"}' > /etc/vaultctl/gate.conf")
        defer { m.asRoot("rm -f /etc/vaultctl/gate.conf") }
        #expect(store("alice", "mail", "s3cret").status == 0)
        let noTPM = m.run("alice", ["device-key", "seal", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(noTPM.status == 69 && noTPM.stderr.contains("gate.conf"), "\(noTPM)")
        // The gate's TPM is root's choice: the message never tells the user to set the variable it ignores.
        #expect(noTPM.stderr.contains("never VAULTCTL_TPM2_TCTI") && !noTPM.stderr.contains("set VAULTCTL_TPM2_TCTI"), "\(noTPM)")

        let tpm = "\(m.folder)/tpm-seal"
        let started = ProcessRunner.run(Paths.swtpmScript, ["start", tpm], environment: Fixtures.baseEnvironment)
        try #require(started.status == 0, "\(started)")
        defer { _ = ProcessRunner.run(Paths.swtpmScript, ["stop", tpm], environment: Fixtures.baseEnvironment) }
        chmod(tpm, 0o711)
        for socket in ["sock", "sock.ctrl"] { chmod("\(tpm)/\(socket)", 0o666) }
        m.asRoot("printf '%s' '{\"version\": 1, \"tpm\": \"swtpm:path=\(tpm)/sock\"}' > /etc/vaultctl/gate.conf")
        let wrong = m.run("alice", ["device-key", "seal", "--password-stdin"], stdin: .text("wrong\n"))
        #expect(wrong.status == 77, "\(wrong)")
        let sealed = m.run("alice", ["device-key", "seal", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(sealed.status == 0 && sealed.stderr.contains("1 device slot re-sealed"), "\(sealed)")
        let magic = m.asRoot("head -c 8 /var/lib/vaultctl/\(m.uid("alice"))/device.tpm2 | od -An -tx1").stdoutText
        #expect(magic.contains("56 43 54 4c 54 50 4d 02"), "the new key is made for alice's account: \(magic)")
        // bob has no vault yet: his key is made now, sealed by the gate's TPM for his account, and no slot moves.
        let none = m.run("bob", ["device-key", "seal", "--password-stdin"], stdin: .text("bob-pw\n"))
        #expect(none.status == 0 && none.stderr.contains("0 device slots re-sealed"), "\(none)")
        let bobs = m.asRoot("head -c 8 /var/lib/vaultctl/\(m.uid("bob"))/device.tpm2 | od -An -tx1").stdoutText
        #expect(bobs.contains("56 43 54 4c 54 50 4d 02"), "\(bobs)")
        let status = m.run("alice", ["status", "mail", "--json"])
        #expect(status.stdoutText.contains("\"binding\":\"tpm2\""), "\(status)")
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "s3cret")
        let again = m.run("alice", ["device-key", "seal", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(again.status == 0 && again.stderr.contains("already"), "\(again)")
    }

    @Test func aFileSizeLimitOrClosedDescriptorsLoseNothing() throws {
        #expect(store("alice", "mail", "old").status == 0)
        let askpass = try m.script("right", "echo alice-pw")
        // The gate itself under RLIMIT_FSIZE (vaultctl would die of SIGXFSZ first; the gate ignores it), asked
        // to store over the value, the password already in its input: refused, and the old value whole.
        for limit in [0, 9, 100] {
            let request = "1 store mail"
            let frames = "request \(request.utf8.count)\n\(request)secret 3\nnewanswer 8\nalice-pw"
            let r = m.run("alice", ["--fsize=\(limit)", "--", m.gate], program: "/usr/bin/prlimit", stdin: .text(frames))
            #expect(r.status < 128 && r.stdoutText.contains("refused") && !r.stdoutText.contains("\nok 0"), "limit \(limit): \(r)")
            #expect(read("alice", "mail", password: "alice-pw").stdoutText == "old", "limit \(limit)")
        }
        // Through vaultctl as a person would hit it: it fails, and the value is whole.
        let limited = m.run("alice", ["store", "mail"], stdin: .text("new"), environment: ["VAULT_ASKPASS": askpass],
                            wrap: ["/usr/bin/prlimit", "--fsize=0", "--"])
        #expect(limited.status != 0, "\(limited)")
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "old")
        // The gate run with descriptors 0, 1 and 2 closed: it cannot be made to write into a file it opens.
        let bare = m.run("alice", ["-c", "'\(m.gate)' <&- >&- 2>&-; echo $?"], program: "/bin/sh")
        #expect(["0\n", "74\n"].contains(bare.stdoutText), "\(bare)")
        #expect(read("alice", "mail", password: "alice-pw").stdoutText == "old")
    }
}
