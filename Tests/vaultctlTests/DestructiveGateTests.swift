import Foundation
import Testing
import TestSupport

/// Changes that cannot be undone ask for a fresh PAM authentication first (issue 13): `delete`, a `store`
/// over a value, a `recovery generate` over a code. Every change leaves an audit line, never the secret or
/// its length. The policy's `gate` section may relax store-over and delete, never replacing a recovery
/// code marked as written down, which also needs `--replace`.
@Suite("destructive changes: gated and audited", .tags(.needsServices))
struct DestructiveGateTests {
    /// A delete with a wrong password is 77 and leaves the value (and its permission) readable; with the
    /// right one it goes.
    @Test func deleteWithAWrongPasswordLeavesTheValue() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gated-delete")
        try sb.storeSuppliable(name, Array("kept-value".utf8))
        sb.resetAskpassLog()

        let wrong = try sb.vaultctlCounted(["delete", name], password: .wrong)
        #expect(wrong.status == 77, "\(wrong)")
        #expect(sb.askpassCalls == 1, "delete asked for the password")
        let still = try sb.vaultctlCounted(["read", name])
        #expect(still.status == 0 && still.stdoutText == "kept-value", "\(still)")
        #expect(try sb.statusObject(name)["allowSupply"] as? Bool == true, "the permission stays too")

        let right = try sb.vaultctlCounted(["delete", name])
        #expect(right.status == 0, "\(right)")
        let gone = try sb.vaultctlCounted(["read", name])
        #expect(gone.status == 66, "\(gone)")
    }

    /// A delete of nothing asks nothing: 66 before any prompt.
    @Test func deleteOfAnEmptySlotAsksNothing() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gated-delete-empty")
        let r = try sb.vaultctlCounted(["delete", name], password: .wrong)
        #expect(r.status == 66, "\(r)")
        #expect(sb.askpassCalls == 0, "no prompt for nothing to delete")
    }

    /// A first store asks nothing; a store over that value with a wrong password is 77 and the old value
    /// stays, in both modes; with the right password the new value is in.
    @Test(arguments: ["device", "sync"])
    func storeOverAValueNeedsThePassword(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gated-store-\(mode)")
        let first = try sb.vaultctlCounted(["store", name, "--mode", mode], password: .wrong, stdin: .text("old-value"))
        #expect(first.status == 0, "\(first)")
        #expect(sb.askpassCalls == 0, "a first store needs no password")

        let over = try sb.vaultctlCounted(["store", name, "--mode", mode], password: .wrong, stdin: .text("new-value"))
        #expect(over.status == 77, "\(over)")
        #expect(sb.askpassCalls == 1)
        let old = try sb.vaultctlCounted(["read", name])
        #expect(old.status == 0 && old.stdoutText == "old-value", "the old value stays: \(old)")

        let right = try sb.vaultctlCounted(["store", name, "--mode", mode], stdin: .text("new-value"))
        #expect(right.status == 0, "\(right)")
        let new = try sb.vaultctlCounted(["read", name])
        #expect(new.status == 0 && new.stdoutText == "new-value", "\(new)")
    }

    /// A store over a value in the other mode is a replacement too.
    @Test func storeIntoTheOtherModeOverAValueNeedsThePassword() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gated-store-cross")
        try sb.store(name, Array("device-value".utf8), mode: "device")
        let over = try sb.vaultctlCounted(["store", name, "--mode", "sync"], password: .wrong, stdin: .text("sync-value"))
        #expect(over.status == 77, "\(over)")
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "nothing was written to the keyring")
        let old = try sb.vaultctlCounted(["read", name])
        #expect(old.stdoutText == "device-value", "\(old)")
    }

    /// Failed passwords at delete and store-over count toward the rate limit like reads: the third starts
    /// a block, and the fourth is 75 with no prompt.
    @Test func failedPasswordsAtChangesCountTowardTheLimit() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gated-limit")
        try sb.store(name, Array("v".utf8))
        sb.resetAskpassLog()
        #expect(try sb.vaultctlCounted(["delete", name], password: .wrong).status == 77)
        #expect(try sb.vaultctlCounted(["store", name], password: .wrong, stdin: .text("w")).status == 77)
        #expect(try sb.vaultctlCounted(["read", name], password: .wrong).status == 77)
        let blocked = try sb.vaultctlCounted(["delete", name])
        #expect(blocked.status == 75, "\(blocked)")
        #expect(sb.askpassCalls == 3, "no prompt while blocked")
    }

    /// Each change leaves one line: store, delete, move, recovery generate and confirm-copied,
    /// allow-supply, lock and unlock. No line holds the secret or its length. On a keyring of its own:
    /// `lock` locks the keyring's default collection.
    @Test func everyChangeLeavesAnAuditLine() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            let name = sb.uniqueSlot("audited-change")
            let secret = AuditLogTests.secret37(name)
            let runs: [(args: [String], stdin: Stdin)] = [
                (["store", name], .bytes(secret)),
                (["store", name], .bytes(secret)),
                (["move", name, "--to", "sync"], .null),
                (["allow-supply", name, "on"], .null),
                (["allow-supply", name, "off"], .null),
                (["recovery", "generate"], .null),
                (["recovery", "confirm-copied"], .null),
                (["delete", name], .null),
                (["lock"], .null),
                (["unlock"], .null),
            ]
            for run in runs {
                let r = try sb.vaultctlCounted(run.args, stdin: run.stdin)
                #expect(r.status == 0, "\(run.args): \(r)")
            }
            let lines = sb.auditFileLines.filter { !$0.contains("PAM could not start") }
            let entries = try JSONLines.parse(lines.joined(separator: "\n"))
            #expect(entries.map { $0["command"] as? String } == runs.map { $0.args.prefix(2).joined(separator: " ") }
                .map { $0.hasPrefix("recovery") ? $0 : String($0.split(separator: " ")[0]) }, "\(lines)")
            #expect(entries.allSatisfy { $0["result"] as? String == "ok" }, "\(lines)")
            #expect(entries.filter { $0["command"] as? String == "store" }.allSatisfy { $0["slot"] as? String == name })
            #expect(entries.filter { ($0["command"] as? String)?.hasPrefix("recovery") == true }
                .allSatisfy { $0["slot"] as? String == "recovery-code" })
            let text = lines.joined(separator: "\n")
            #expect(!text.contains(String(decoding: secret, as: UTF8.self)), "never the secret")
            // Never its length: no field but the slot name and the time (which may hold any digits) says 37.
            for entry in entries {
                for (key, value) in entry where key != "slot" && key != "time" {
                    #expect(!"\(value)".contains("37"), "never its length: \(key) = \(value)")
                }
            }
        }
    }

    /// `gate.delete: false` and `gate.storeOver: false` let delete and store-over run with no prompt.
    @Test func thePolicyMayRelaxDeleteAndStoreOver() throws {
        let sb = try Sandbox()
        try sb.writePolicy(#"{"version": 1, "gate": {"storeOver": false, "delete": false}}"#)
        let name = sb.uniqueSlot("relaxed")
        try sb.store(name, Array("one".utf8))
        let over = try sb.vaultctlCounted(["store", name], password: .wrong, stdin: .text("two"))
        #expect(over.status == 0, "\(over)")
        #expect(try sb.vaultctlCounted(["read", name]).stdoutText == "two")
        sb.resetAskpassLog()
        let delete = try sb.vaultctlCounted(["delete", name], password: .wrong)
        #expect(delete.status == 0, "\(delete)")
        #expect(sb.askpassCalls == 0, "relaxed: no prompt")
        #expect(try sb.vaultctlCounted(["read", name]).status == 66)
        let lines = sb.auditFileLines.joined(separator: "\n")
        #expect(lines.contains(#""command":"delete""#), "still audited: \(lines)")
    }

    /// Replacing a recovery code marked as written down needs `--replace` (64, no prompt without it) and a
    /// password even when the policy relaxes store-over; a wrong one leaves the code. An unmarked code is
    /// an ordinary store-over.
    @Test func replacingAConfirmedRecoveryCodeNeedsReplaceAndThePasswordWhateverThePolicy() throws {
        let sb = try Sandbox()
        try sb.writePolicy(#"{"version": 1, "gate": {"storeOver": false, "delete": false}}"#)
        #expect(try sb.vaultctlCounted(["recovery", "generate"], password: .wrong).status == 0)
        // Not marked: relaxed by the policy, no prompt.
        #expect(try sb.vaultctlCounted(["recovery", "generate"], password: .wrong).status == 0)
        #expect(sb.askpassCalls == 0)
        #expect(try sb.vaultctlCounted(["recovery", "confirm-copied"]).status == 0)
        let code = try sb.vaultctlCounted(["recovery", "show"])
        try #require(code.status == 0, "\(code)")
        sb.resetAskpassLog()

        let without = try sb.vaultctlCounted(["recovery", "generate"])
        #expect(without.status == 64, "\(without)")
        #expect(without.stderr.contains("--replace"), "\(without)")
        #expect(sb.askpassCalls == 0, "refused before any prompt")

        let wrong = try sb.vaultctlCounted(["recovery", "generate", "--replace"], password: .wrong)
        #expect(wrong.status == 77, "the policy does not relax this: \(wrong)")
        let same = try sb.vaultctlCounted(["recovery", "show"])
        #expect(same.stdout == code.stdout, "the written-down code stays")
        #expect(try Self.copied(sb) == true, "and stays marked")

        let right = try sb.vaultctlCounted(["recovery", "generate", "--replace"])
        #expect(right.status == 0, "\(right)")
        let new = try sb.vaultctlCounted(["recovery", "show"])
        #expect(new.status == 0 && new.stdout != code.stdout, "a new code")
        #expect(try Self.copied(sb) == false, "the new code is not marked")
    }

    /// With the default policy, replacing an unmarked recovery code asks for the password too.
    @Test func replacingAnUnmarkedRecoveryCodeAsksByDefault() throws {
        let sb = try Sandbox()
        #expect(try sb.vaultctlCounted(["recovery", "generate"], password: .wrong).status == 0)
        let code = try sb.vaultctlCounted(["recovery", "show"])
        let wrong = try sb.vaultctlCounted(["recovery", "generate"], password: .wrong)
        #expect(wrong.status == 77, "\(wrong)")
        #expect(try sb.vaultctlCounted(["recovery", "show"]).stdout == code.stdout)
    }

    /// `recovery status --json`'s `copied` (run with the right password, should it ask).
    static func copied(_ sb: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool? {
        let r = try sb.vaultctlCounted(["recovery", "status", "--json"], sourceLocation: sourceLocation)
        try #require(r.status == 0, "\(r)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any]
        return object?["copied"] as? Bool
    }
}
