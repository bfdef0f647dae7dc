#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The smaller gaps of issue 22: `credential erase` without a password, askpass answers that are no answer,
/// `lock` killed between locking the keyring and writing it down, changes behind a held audit lock, names
/// that are not UTF-8, and an empty secret said before the bus is asked.
@Suite("gate gaps", .tags(.needsServices))
struct GateGapsTests {
    // MARK: credential erase (point 6)

    static func erase(_ sb: Sandbox, _ text: String) -> ProcessResult {
        let env = ((try? sb.environment(askpass: .unset)) ?? [:]).merging(["VAULT_ASKPASS": (try? sb.countingAskpass(.correct)) ?? ""]) { $1 }
        return ProcessRunner.run(Paths.vaultctl, ["credential", "erase"], environment: env, stdin: .text(text)).droppingPAMWrapperNoise()
    }

    /// git sends the rejected password with every erase; without one nothing is erased, nothing is asked,
    /// and the audit line says "kept".
    @Test func anEraseWithoutAPasswordErasesNothing() throws {
        let sb = try Sandbox()
        let host = "\(sb.uniqueSlot("host")).example"
        try sb.store("git_https_alice@\(host)", Array("alice-token".utf8))
        try sb.store("git_https_bob@\(host)", Array("bob-token".utf8))
        sb.resetAskpassLog()
        let r = Self.erase(sb, "protocol=https\nhost=\(host)\n\n")
        #expect(r.status == 0, "\(r)")
        #expect(sb.askpassCalls == 0)
        let listed = try sb.listed()
        #expect(listed["git_https_alice@\(host)"] != nil && listed["git_https_bob@\(host)"] != nil, "\(listed)")
        let line = sb.auditFileLines.last ?? ""
        #expect(line.contains(#""command":"credential erase""#) && line.contains(#""result":"kept""#), "\(line)")
    }

    /// Without a username, the erase compares every user's credential for the host, erases only the one
    /// that holds the rejected password, and leaves one audit line for each slot it compared.
    @Test func anEraseForAHostAuditsEverySlotItCompared() throws {
        let sb = try Sandbox()
        let host = "\(sb.uniqueSlot("host")).example"
        let alice = "git_https_alice@\(host)", bob = "git_https_bob@\(host)"
        try sb.store(alice, Array("alice-token".utf8))
        try sb.store(bob, Array("bob-token".utf8))
        let r = Self.erase(sb, "protocol=https\nhost=\(host)\npassword=bob-token\n\n")
        #expect(r.status == 0, "\(r)")
        let listed = try sb.listed()
        #expect(listed[alice] != nil && listed[bob] == nil, "\(listed)")
        let lines = sb.auditFileLines.filter { $0.contains(#""command":"credential erase""#) }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("\"\(alice)\"") && $0.contains(#""result":"kept""#) }, "\(lines)")
        #expect(lines.contains { $0.contains("\"\(bob)\"") && $0.contains(#""result":"erased""#) }, "\(lines)")
    }

    /// `credential store` (git's call after a successful use) fills an empty slot and never replaces a value:
    /// a program calling it directly cannot destroy a stored password without the password.
    @Test func aCredentialStoreNeverReplacesAValue() throws {
        let sb = try Sandbox()
        let host = "\(sb.uniqueSlot("host")).example"
        let slot = "git_https_alice@\(host)"
        try sb.store(slot, Array("REALTOKEN".utf8))
        let env = try sb.environment(askpass: .declining)
        let r = ProcessRunner.run(Paths.vaultctl, ["credential", "store", "--mode", "sync"], environment: env,
                                  stdin: .text("protocol=https\nhost=\(host)\nusername=alice\npassword=EVIL\n\n"))
        #expect(r.status == 0, "git ignores a helper's store failures: \(r)")
        let line = sb.auditFileLines.last ?? ""
        #expect(line.contains(#""command":"credential store""#) && line.contains(#""result":"kept""#), "\(line)")
        #expect(try sb.read(slot).stdoutText == "REALTOKEN")
        #expect(sb.keyringValue(slot).isEmpty)
        // An empty slot is filled, with no prompt.
        let other = "git_https_bob@\(host)"
        let fill = ProcessRunner.run(Paths.vaultctl, ["credential", "store"], environment: env,
                                     stdin: .text("protocol=https\nhost=\(host)\nusername=bob\npassword=BOBTOKEN\n\n"))
        #expect(fill.status == 0, "\(fill)")
        #expect(try sb.read(other).stdoutText == "BOBTOKEN")
    }

    // MARK: askpass answers that are no answer (point 9)

    /// An askpass program that prints nothing, an empty line, or closes its output and keeps running gives
    /// no password: 77 with those words, PAM never sees it and the rate limit does not count it.
    @Test(arguments: ["exit 0", "echo", "exec >&-; sleep 10"])
    func anAskpassThatGivesNothingIsNotAWrongPassword(body: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("no-answer")
        try sb.store(name, Array("kept".utf8))
        let program = "\(sb.root)/askpass-nothing"
        try sb.writeScript(program, body + "\n")
        for _ in 0..<4 {
            let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": program])
            #expect(r.status == 77 && r.stderr.contains("gave no password"), "\(r)")
            #expect(r.stdout.isEmpty)
        }
        let read = try sb.readReliably(name)
        #expect(read.status == 0 && read.stdoutText == "kept", "not blocked by the rate limit: \(read)")
    }

    /// An answer ending in CR-LF is the password without the CR, as with --password-stdin.
    @Test func anAskpassAnswerEndingInCRLFIsThePassword() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("crlf")
        try sb.store(name, Array("kept".utf8))
        let program = "\(sb.root)/askpass-crlf"
        try sb.writeScript(program, "printf '%s\\r\\n' '\(Fixtures.pamPassword)'\n")
        let r = try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": program])
        #expect(r.status == 0 && r.stdoutText == "kept", "\(r)")
    }

    // MARK: lock killed halfway (point 10)

    /// `lock` killed at any of its steps: whenever the keyring's collection ended up locked by it, the record
    /// that tells `unlock` to undo that is there (the intent is written first). Killed as it renames the
    /// record into place (its second rename, after the vault's own marker: before locking, now) and as it
    /// opens its audit log (after locking).
    @Test(arguments: [["-e", "trace=rename", "-e", "inject=rename:signal=KILL:when=2"],
                      ["-P", "audit.log", "-e", "trace=openat", "-e", "inject=openat:signal=KILL:when=1"]])
    func aLockKilledHalfwayNeverLeavesTheKeyringLockedUnrecorded(killAt: [String]) throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("lk")
            try sb.store(name, Array("v".utf8))  // the state folder exists
            let options = killAt.map { $0 == "audit.log" ? "\(sb.stateFolder)/audit.log" : $0 }
            let lock = ProcessRunner.run(Paths.tool("strace"), ["-f", "-qq", "-o", "/dev/null"] + options + [Paths.vaultctl, "lock"],
                                         environment: sb.environmentWithoutPAM())
            try #require(lock.status == 128 + SIGKILL, "\(lock)")
            let recorded = Paths.exists("\(sb.stateFolder)/keyring-locked")
            if keyring.loginCollectionLocked() == true {
                #expect(recorded, "the collection is locked, and nothing tells unlock so")
            }
            if killAt.contains("audit.log") {
                #expect(keyring.loginCollectionLocked() == true && recorded, "killed after locking: locked and recorded")
                let unlock = try sb.vaultctlCounted(["unlock"])
                #expect(unlock.status == 0 && unlock.stderr.contains("'vaultctl lock' locked"), "unlock tries to undo it: \(unlock)")
            }
        }
    }

    // MARK: changes behind a held audit lock (point 11)

    /// Another process holding `.audit.lock`: a change whose line could not be written is refused after the
    /// bounded wait (75, naming the holder), and nothing changes.
    @Test func changesAreRefusedWhileAnotherProcessHoldsTheAuditLock() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("audit-held-change")
        try sb.store(name, Array("v".utf8))
        let holder = try LockWaitTests.Holder("\(sb.stateFolder)/.audit.lock")
        let fresh = sb.uniqueSlot("fresh")
        let store = try sb.vaultctl(["store", fresh], stdin: .text("x"))
        #expect(store.status == 75 && store.stderr.contains("PID \(holder.pid)"), "\(store)")
        #expect(sb.deviceFileSize(fresh) == nil, "nothing stored")
        let allow = try sb.vaultctl(["allow-supply", name, "on"])
        #expect(allow.status == 75, "\(allow)")
        let delete = try sb.vaultctl(["delete", name])
        #expect(delete.status == 75, "\(delete)")
        #expect(sb.deviceFileSize(name) != nil, "nothing deleted")
    }

    // MARK: input (point 13)

    /// A name that is not UTF-8 is shown with its bytes escaped, not as U+FFFD.
    @Test func aNameThatIsNotUTF8IsShownEscaped() throws {
        let sb = try Sandbox()
        let r = ProcessRunner.run(Paths.tool("sh"), ["-c", "exec \"$0\" read \"$(printf 'bad\\377name')\"", Paths.vaultctl],
                                  environment: try sb.environment(askpass: .unset))
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains(#"'bad\xffname'"#), "\(r.stderr)")
        #expect(!r.stderr.contains("\u{FFFD}"), "\(r.stderr)")
    }

    /// Words passed on to a program keep their bytes: UTF-8 as it is, and bytes that are not UTF-8.
    @Test func aSuppliedCommandGetsItsArgumentsByteForByte() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("args")
        try sb.storeSuppliable(name, Array("s".utf8))
        let consumer = try sb.makeConsumer()
        let r = try sb.vaultctlCounted(["supply", name, "--", consumer.path, "Grüße", "/home/u/Документы"],
                                       prefix: [Paths.tool("sh"), "-c", "exec \"$0\" \"$@\" \"$(printf 'bad\\377')\""])
        #expect(r.status == 0, "\(r)")
        #expect(consumer.arguments == Array("Grüße\n/home/u/Документы\nbad".utf8) + [0xFF, 0x0A], "\(consumer.arguments)")
    }

    /// An empty secret on standard input is refused at once, before a bus that never answers is asked.
    @Test func anEmptySecretIsRefusedBeforeTheBusIsAsked() throws {
        let bus = try SilentBus()
        let sb = try Sandbox(busAddress: bus.address)
        let r = try sb.vaultctl(["store", sb.uniqueSlot("empty")], stdin: .bytes([]))
        #expect(r.status == 65, "\(r)")
        #expect(r.elapsed < .seconds(2), "said at once, not after the bus's 5 s: \(r.elapsed)")
    }
}
