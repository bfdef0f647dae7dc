import Testing
import Slots
@testable import GateProtocol

/// Issue 34, point 4: every prompt sentence written once (`PromptReason`), and the gate's allowlist of the
/// sentences it shows as they are made from its cases.
@Suite struct PromptReasonTests {
    /// Every case with its words as tests and docs quote them, and whether the gate shows it as it is for
    /// the slots it is asked with (`opens`), or adds which slots it opens.
    static func everyCase() throws -> [(reason: PromptReason, text: String, opens: [SlotName], asItIs: Bool)] {
        let mail = try #require(SlotName("mail")), bank = try #require(SlotName("bank"))
        let recovery = try #require(SlotName("vaultctl-recovery"))
        return [
            (.read(mail), "read slot 'mail'", [mail], true),
            (.replace(mail), "replace the value in slot 'mail'", [mail], true),
            (.delete(mail), "delete slot 'mail'", [mail], true),
            (.supply(mail), "supply slot 'mail'", [mail], true),
            (.allowSupply(mail), "allow supplying slot 'mail'", [mail], true),
            (.eraseRejectedCredential([mail]), "erase the credential git rejected ('mail')", [mail], true),
            (.eraseRejectedCredential([mail, bank]), "erase the credential git rejected ('mail', 'bank')", [mail, bank], true),
            (.move(mail, to: .device), "move slot 'mail' to the device slot", [mail], true),
            (.move(mail, to: .sync), "move slot 'mail' to the sync slot", [mail], true),
            (.removeLeftCopy(mail, in: .device), "remove the copy of slot 'mail' left in the device slot", [mail], true),
            (.removeLeftCopy(mail, in: .sync), "remove the copy of slot 'mail' left in the sync slot", [mail], true),
            (.unlockVault, "unlock the vault", [], false),
            (.sealDeviceKey, "seal the device key with the TPM", [], false),
            (.moveBehindGate, "move the device slots behind vaultctl-gate", [], false),
            (.replaceRecoveryCode, "replace the recovery code (first, whether it is the one marked as written down)", [recovery], false),
            (.markRecoveryCodeWrittenDown, "mark the recovery code as written down", [recovery], false),
            (.send(mail, host: "laptop", target: "login"), "send slot 'mail' to laptop (target login)", [mail], false),
            (.askpass(mail, asked: nil), "askpass for slot 'mail'", [mail], false),
            (.askpass(mail, asked: "Enter passphrase"), "askpass for slot 'mail', asked \"Enter passphrase\"", [mail], false),
        ]
    }

    @Test func eachSentenceKeepsItsWords() throws {
        for c in try Self.everyCase() { #expect(c.reason.text == c.text) }
    }

    /// The allowlist is the cases' own list: a sentence naming exactly the slots opened is shown as it is,
    /// any other gets the gate's "(opens slot …)".
    @Test func theGateShowsExactlyTheSentencesThatNameTheSlotsOpened() throws {
        let bank = try #require(SlotName("bank"))
        for c in try Self.everyCase() {
            #expect(PromptReason.sentences(c.reason.kind, naming: c.opens).contains(c.reason) == c.asItIs, "\(c.text)")
            guard !c.opens.isEmpty else { continue }
            let shown = GateScope.slots(c.opens).prompt(c.reason.text)
            #expect(c.asItIs ? shown == c.text : shown.hasPrefix("\(c.text) (opens slot"), "\(shown)")
            // For another slot, no sentence is shown as it is.
            #expect(GateScope.slots([bank]).prompt(c.reason.text).hasSuffix("(opens slot 'bank')"), "\(c.text)")
        }
    }
}
