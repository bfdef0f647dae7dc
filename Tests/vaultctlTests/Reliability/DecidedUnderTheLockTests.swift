#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A change that asked no password because of what one look saw is done only if that still holds under the
/// change lock, on what is there then (issue 22, points 1, 2 and 5). Each race is made deterministic: the
/// attacker's command is stopped (strace) on entry to its `openat` of `.changes.lock` for the change, right
/// after its look; the owner changes the slot; then the attacker goes on.
@Suite("changes decided under the lock", .tags(.needsServices))
struct DecidedUnderTheLockTests {
    /// The change lock's path, which every look (shared) and change (exclusive) opens.
    static func changeLock(_ sb: Sandbox) -> String { "\(sb.stateFolder)/.changes.lock" }

    /// A delete that found the slot empty (so it asked nothing) never deletes a value stored after its look:
    /// under the lock it finds the value, and deleting it is then a delete of a value, asked for as one
    /// (the attacker's askpass declines: 77, nothing deleted).
    @Test func aDeleteThatAskedNothingNeverDeletesAValueStoredMeanwhile() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("delete-race")
        try sb.store(sb.uniqueSlot("warm"), Array("w".utf8))  // the state folder and its lock file exist
        let attacker = try StoppedRun(sb, ["delete", name], marker: name, askpass: .declining,
                                      of: Self.changeLock(sb), occurrence: 2)
        try #require(attacker.waitUntilStopped(), "the delete never reached its change: \(String(describing: attacker.result))")
        try sb.store(name, Array("fresh-value".utf8))
        let r = attacker.resume()
        #expect(r.status == 77, "a delete of a value asks for the password, and this one declined: \(r)")
        let read = try sb.read(name)
        #expect(read.status == 0 && read.stdoutText == "fresh-value", "the value stored meanwhile is still there: \(read)")
        let lines = sb.auditFileLines.filter { $0.contains(#""command":"delete""#) }
        #expect(!lines.contains { $0.contains(#""result":"ok""#) }, "no delete was audited as done: \(lines)")
    }

    /// The same with the right password: the delete asks, then deletes what is there.
    @Test func aDeleteThatFindsAValueUnderTheLockAsksAndThenDeletes() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("delete-race-ok")
        try sb.store(sb.uniqueSlot("warm"), Array("w".utf8))
        sb.resetAskpassLog()
        let attacker = try StoppedRun(sb, ["delete", name], marker: name,
                                      overriding: ["VAULT_ASKPASS": try sb.countingAskpass(.correct)],
                                      of: Self.changeLock(sb), occurrence: 2)
        try #require(attacker.waitUntilStopped())
        try sb.store(name, Array("fresh-value".utf8))
        let r = attacker.resume()
        #expect(r.status == 0, "\(r)")
        #expect(sb.askpassCalls == 1, "it asked once, when it found the value")
        #expect(try sb.read(name).status == 66)
    }

    /// `move x --to sync` while x is in the sync slot asks nothing; if the owner moves x to the device slot
    /// meanwhile, it must not carry the device-only value back to the Secret Service without a password.
    @Test func aMoveThatAskedNothingNeverMovesAValueThatMovedMeanwhile() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("move-race")
        try sb.store(name, Array("device-only-value".utf8), mode: "sync")
        let attacker = try StoppedRun(sb, ["move", name, "--to", "sync"], marker: name, askpass: .declining,
                                      of: Self.changeLock(sb), occurrence: 2)
        try #require(attacker.waitUntilStopped(), "the move never reached its change: \(String(describing: attacker.result))")
        let owner = try sb.vaultctl(["move", name, "--to", "device"])
        try #require(owner.status == 0, "\(owner)")
        try #require(sb.keyringValue(name).isEmpty, "the owner's move emptied the keyring")
        let r = attacker.resume()
        #expect(r.status == 77, "moving it back needs the password, and this one declined: \(r)")
        #expect(sb.keyringValue(name).isEmpty, "the device-only value was handed back to the Secret Service")
        let status = try sb.statusObject(name)
        #expect(status["state"] as? String == "on-this-device", "\(status)")
    }

    /// A copy left in the other slot is removed by `move` only after a password (gate.delete): it may hold
    /// another value, as one planted through a state folder of the attacker's choosing does. The owner's
    /// device secret survives the attacker's declining askpass; with the password it goes, and `move` says
    /// it held another value.
    @Test func aMoveRemovesADifferentLeftoverCopyOnlyAfterThePassword() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("bank")
        try sb.store(name, Array("real-device-secret".utf8))
        // The plant through an empty state folder (where this store would replace nothing) is a store that
        // points the record away from the device slot: it asks, and the attacker's askpass declines.
        let elsewhere = try Fixtures.makeFolder("elsewhere")
        let planted = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("planted"), askpass: .declining,
                                      overriding: ["XDG_STATE_HOME": elsewhere])
        #expect(planted.status == 77, "\(planted)")
        #expect(sb.recordedMode(name) == "device")
        // The state that plant used to leave, made by hand: another value in the keyring, the record on it.
        try sb.putKeyringItem(name, Array("planted".utf8), label: "vaultctl: \(name)")
        try #require(FileText.write("\(sb.configFolder)/modes.json", "{\"slots\":{\"\(name)\":\"sync\"},\"version\":1}", mode: 0o600))
        let before = try #require(FileBytes.read(sb.slotFile(name)))

        let attacker = try sb.vaultctl(["move", name, "--to", "sync"], askpass: .declining)
        #expect(attacker.status == 77, "removing the device copy needs the password: \(attacker)")
        #expect(FileBytes.read(sb.slotFile(name)) == before, "the device secret is still there")

        let owner = try sb.vaultctl(["move", name, "--to", "sync"])
        #expect(owner.status == 0 && owner.stderr.contains("held another value"), "\(owner)")
        #expect(sb.deviceFileSize(name) == nil)
    }

    /// An identical leftover copy (an interrupted move) still goes after the password, and `move` says it
    /// removed the leftover copy.
    @Test func aMoveRemovesTheSameLeftoverCopyAfterThePassword() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("leftover")
        try sb.store(name, Array("same-value".utf8))
        // The copy an interrupted move would leave: the same value under the slot's attributes in the keyring.
        try sb.putKeyringItem(name, Array("same-value".utf8), label: "vaultctl: \(name)")
        sb.resetAskpassLog()
        let r = try sb.vaultctlCounted(["move", name, "--to", "device"])
        #expect(r.status == 0 && r.stderr.contains("removed the leftover copy"), "\(r)")
        #expect(sb.askpassCalls == 1, "removing a copy asks, as a delete does")
        #expect(sb.keyringValue(name).isEmpty)
        #expect(try sb.read(name).stdoutText == "same-value")
    }

    /// With `gate.delete: false` the leftover goes without a prompt, and so without a comparison (it would read
    /// both copies): `move` says it did not compare them rather than call them the same.
    @Test func aRelaxedPolicyRemovesTheLeftoverWithoutSayingItMatched() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("relaxed-leftover")
        try sb.store(name, Array("device-value".utf8))
        try sb.putKeyringItem(name, Array("another-value".utf8), label: "vaultctl: \(name)")
        let r = try sb.vaultctl(["move", name, "--to", "device"], askpass: .declining)
        #expect(r.status == 0 && r.stderr.contains("not compared"), "\(r)")
        #expect(sb.keyringValue(name).isEmpty)
    }

    /// A recovery code marked as written down is not replaced, and its mark is not cleared, by a generate
    /// run against a state folder of the attacker's choosing. On a keyring of its own: a generate that
    /// went wrong would leave its code in the sync slot, where every sandbox on the shared keyring sees it.
    @Test func aWrittenDownRecoveryCodeKeepsItsMarkWhateverTheStateFolder() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            #expect(try sb.vaultctl(["recovery", "generate"]).status == 0)
            #expect(try sb.vaultctl(["recovery", "confirm-copied"]).status == 0)
            let code = try sb.vaultctl(["recovery", "show"])
            try #require(code.status == 0, "\(code)")
            let elsewhere = try Fixtures.makeFolder("elsewhere")
            for mode in ["device", "sync"] {
                let r = try sb.vaultctl(["recovery", "generate", "--mode", mode], askpass: .declining,
                                        overriding: ["XDG_STATE_HOME": elsewhere])
                if mode == "sync" {
                    #expect(r.status == 77, "pointing the record at another slot replaces the code there: \(r)")
                }
                #expect(try DestructiveGateTests.copied(sb) == true, "the mark of the written-down code stays (\(mode))")
                #expect(try sb.vaultctl(["recovery", "show"]).stdout == code.stdout, "and so does the code (\(mode))")
            }
        }
    }

    /// A written-down device code sealed again (moved out and back) has another sealed form than the mark
    /// recorded: it may be the same code, so it is read after the password and compared, and replacing it
    /// still needs --replace.
    /// On a keyring of its own: the code passes through the sync slot, where every sandbox on the shared
    /// keyring would see it (and another test's generate would take it for its own and delete it).
    @Test func aWrittenDownCodeSealedAgainStillNeedsReplace() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            let generated = try sb.vaultctl(["recovery", "generate"])
            try #require(generated.status == 0, "\(generated)")
            let confirmed = try sb.vaultctl(["recovery", "confirm-copied"])
            try #require(confirmed.status == 0, "\(confirmed)")
            let code = try sb.vaultctl(["recovery", "show"])
            try #require(code.status == 0, "\(code)")
            let out = try sb.vaultctl(["move", "recovery-code", "--to", "sync"])
            #expect(out.status == 0, "\(out)")
            let back = try sb.vaultctl(["move", "recovery-code", "--to", "device"])
            #expect(back.status == 0, "\(back)")
            let plain = try sb.vaultctl(["recovery", "generate"])
            let status = try sb.vaultctl(["recovery", "status"])
            #expect(plain.status == 64 && plain.stderr.contains("--replace"), "after a move out (\(out.status)) and back (\(back.status)): \(plain); status: \(status)")
            #expect(try sb.vaultctl(["recovery", "show"]).stdout == code.stdout, "the written-down code stays")
            let replaced = try sb.vaultctl(["recovery", "generate", "--replace"])
            #expect(replaced.status == 0, "\(replaced)")
            #expect(try sb.vaultctl(["recovery", "show"]).stdout != code.stdout)
        }
    }

    /// `recovery generate --replace` killed after the new code is stored, before it cleared the old code's
    /// mark: the mark belongs to the old code, so the next plain `generate` is an ordinary store over a
    /// code (the password), not a demand for --replace over a code nobody wrote down.
    @Test func aMarkLeftByAKilledGenerateDoesNotCountForTheNewCode() throws {
        let sb = try Sandbox()
        #expect(try sb.vaultctl(["recovery", "generate"]).status == 0)
        #expect(try sb.vaultctl(["recovery", "confirm-copied"]).status == 0)
        let mark = "\(sb.configFolder)/recovery.json"
        let killed = try sb.vaultctl(["recovery", "generate", "--replace"],
                                     prefix: [Paths.tool("strace"), "-f", "-qq", "-o", "/dev/null", "-P", mark,
                                              "-e", "trace=unlink", "-e", "inject=unlink:signal=KILL:when=1"])
        try #require(killed.status == 128 + SIGKILL, "killed as it cleared the mark: \(killed)")
        try #require(Paths.exists(mark), "the old code's mark is still there")
        #expect(try DestructiveGateTests.copied(sb) == false, "the new code is not marked")
        let again = try sb.vaultctl(["recovery", "generate"])
        #expect(again.status == 0, "no --replace for a code nobody wrote down: \(again)")
    }
}
