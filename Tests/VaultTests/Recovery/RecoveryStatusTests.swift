import Testing
import Slots
@testable import Vault
@testable import VaultRules

/// Generating the recovery code, confirming it was copied, and what `recoveryStatus` may say about it.
@Suite struct RecoveryStatusTests {
    let f = VaultFixture()
    let code = RecoveryCode.slot
    var mark: CopiedMark { CopiedMark(folder: f.folder.appending("config")) }

    // MARK: generateRecoveryCode

    @Test(arguments: [SlotMode.device, .sync])
    func generateStoresACodeInTheRecoveryCodeSlot(mode: SlotMode) throws {
        let outcome = try f.vault.generateRecoveryCode(mode: mode)

        #expect(outcome.warning == nil)
        let stored = try #require(f.slot(mode).value(of: code))
        #expect(stored.count == 39)
        #expect(stored.split(separator: "-").count == 8)
        #expect(f.slot(mode.other).value(of: code) == nil)
        #expect(try f.record.mode(of: code) == mode)
        #expect(f.gate.calls == 0, "generating shows nothing, so it needs no presence check")
    }

    @Test func generateReplacesTheOldCode() throws {
        f.device.seed(code, "OLDC-ODEO-LDCO-DEOL-DCOD-EOLD-CODE-OLDC")
        try f.given(code, recordedAs: .device)

        _ = try f.vault.generateRecoveryCode(mode: .device)

        let stored = try #require(f.device.value(of: code))
        #expect(stored != "OLDC-ODEO-LDCO-DEOL-DCOD-EOLD-CODE-OLDC")
        #expect(stored.count == 39)
    }

    @Test func generateInTheOtherSlotRemovesTheOldCode() throws {
        f.device.seed(code, "OLDC-ODEO-LDCO-DEOL-DCOD-EOLD-CODE-OLDC")
        try f.given(code, recordedAs: .device)

        _ = try f.vault.generateRecoveryCode(mode: .sync)

        #expect(f.device.value(of: code) == nil)
        #expect(f.sync.value(of: code) != nil)
        #expect(try f.record.mode(of: code) == .sync)
    }

    @Test func twoGenerationsGiveDifferentCodes() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        let first = f.device.value(of: code)

        _ = try f.vault.generateRecoveryCode(mode: .device)

        #expect(f.device.value(of: code) != first)
    }

    // MARK: recoveryStatus: copied false / true / nil

    @Test func statusWithoutACodeIsNoneAndNotCopied() throws {
        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.location.state == .none)
        #expect(status.copied == false)
    }

    @Test(arguments: [SlotMode.device, .sync])
    func newCodeIsNotCopied(mode: SlotMode) throws {
        _ = try f.vault.generateRecoveryCode(mode: mode)

        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.location.state == (mode == .sync ? .inSlot : .onThisDevice))
        #expect(status.copied == false)
    }

    @Test(arguments: [SlotMode.device, .sync])
    func confirmedCodeIsCopied(mode: SlotMode) throws {
        _ = try f.vault.generateRecoveryCode(mode: mode)

        f.log.reset()
        try f.vault.confirmRecoveryCopied(mark: mark)
        // The look before the prompt is the one the read of the code follows.
        let beforeGate = f.log.entries.prefix { $0 != "gate.verify" }
        #expect(beforeGate.contains("\(mode.rawValue).holdingBeforeRead \(RecoveryCode.slot)"), "\(f.log.entries)")
        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.copied == true)
    }

    @Test func generatingAgainAfterConfirmingIsNotCopied() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        try f.vault.confirmRecoveryCopied(mark: mark)

        _ = try f.vault.generateRecoveryCode(mode: .device)
        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.copied == false)
    }

    /// The sync slot not fully answering, where the confirmed code is, and what status must then say.
    struct SyncTrouble: Sendable, CustomTestStringConvertible {
        /// The slot the code was generated in.
        let code: SlotMode
        /// Locked (the code is seen, not read) rather than unreachable.
        let locked: Bool
        let state: LocationStatus.State
        /// Whether it was copied: nil, unknown.
        let copied: Bool?

        static let all = [
            // Unknown when sync cannot be asked and the device slot is empty.
            SyncTrouble(code: .sync, locked: false, state: .unknown, copied: nil),
            // Unknown when the code is in a locked collection.
            SyncTrouble(code: .sync, locked: true, state: .inSlot, copied: nil),
            // True when the provider is unreachable and the code is in the device slot.
            SyncTrouble(code: .device, locked: false, state: .onThisDevice, copied: true),
        ]

        var testDescription: String { "code in \(code), sync \(locked ? "locked" : "unreachable")" }
    }

    @Test(arguments: SyncTrouble.all)
    func copiedWhenTheSyncSlotDoesNotFullyAnswer(_ trouble: SyncTrouble) throws {
        _ = try f.vault.generateRecoveryCode(mode: trouble.code)
        try f.vault.confirmRecoveryCopied(mark: mark)
        if trouble.locked {
            f.sync.isLocked = true
        } else {
            f.sync.unavailable = .serviceUnavailable("no provider")
        }

        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.location.state == trouble.state)
        #expect(status.copied == trouble.copied)
    }

    @Test(arguments: [SlotMode.device, .sync])
    func statusNeverCallsTheGateAndNeverWritesASlot(mode: SlotMode) throws {
        _ = try f.vault.generateRecoveryCode(mode: mode)
        try f.vault.confirmRecoveryCopied(mark: mark)
        f.log.reset()
        let calls = f.gate.calls

        _ = try f.vault.recoveryStatus(mark: mark)

        #expect(f.gate.calls == calls)
        #expect(f.log.changes.isEmpty)
    }

    @Test func statusOfADeviceCodeReadsNoValue() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        try f.vault.confirmRecoveryCopied(mark: mark)
        f.log.reset()

        let status = try f.vault.recoveryStatus(mark: mark)

        #expect(status.copied == true)
        #expect(!f.log.entries.contains { $0.hasPrefix("device.read") }, "judged by the stored tag: \(f.log.entries)")
    }

    @Test func aDeviceCodeSealedAgainReadsAsNotMarked() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        try f.vault.confirmRecoveryCopied(mark: mark)
        let code = try #require(f.device.value(of: code))

        try f.device.write(self.code, SecretBytes.text(code))  // the same code, written again

        #expect(try f.vault.recoveryStatus(mark: mark).copied == false)
    }

    @Test func aMarkWithoutAStoredTagDoesNotCountForADeviceCode() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        let code = try #require(f.device.value(of: code))
        try mark.set(for: SecretBytes.text(code))  // as a mark from before stored tags, or for a sync code

        #expect(try f.vault.recoveryStatus(mark: mark).copied == false)
    }

    @Test func confirmPassesTheGateOnceAndWritesNoSlot() throws {
        _ = try f.vault.generateRecoveryCode(mode: .sync)
        f.log.reset()

        try f.vault.confirmRecoveryCopied(mark: mark)

        #expect(f.gate.calls == 1)
        #expect(f.log.changes.isEmpty)
    }

    @Test func aRefusedGateMarksNothing() throws {
        _ = try f.vault.generateRecoveryCode(mode: .device)
        f.gate.passes = false
        f.log.reset()

        #expect(throws: VaultError.self) { try f.vault.confirmRecoveryCopied(mark: mark) }

        #expect(!f.log.entries.contains { $0.hasPrefix("device.read") }, "nothing read after a refusal: \(f.log.entries)")
        f.gate.passes = true
        #expect(try f.vault.recoveryStatus(mark: mark).copied == false)
    }

    // MARK: confirmRecoveryCopied refusals

    @Test func confirmWithoutACodeIsEmpty() throws {
        let error = #expect(throws: VaultError.self) { try f.vault.confirmRecoveryCopied(mark: mark) }

        #expect(error?.slotError == .empty(code))
        #expect(try mark.matches(RecoveryCode.generate()) == false)
    }

    @Test func confirmOfCodeInLockedCollectionIsRefusedAndMarksNothing() throws {
        _ = try f.vault.generateRecoveryCode(mode: .sync)
        f.sync.isLocked = true

        let error = #expect(throws: VaultError.self) { try f.vault.confirmRecoveryCopied(mark: mark) }

        #expect(error?.isLocked == true)
        f.sync.isLocked = false
        #expect(try f.vault.recoveryStatus(mark: mark).copied == false)
    }

    @Test func confirmWhenSyncCannotBeAskedAndDeviceIsEmptyCouldNotLook() throws {
        f.sync.unavailable = .serviceUnavailable("no provider")

        let error = #expect(throws: VaultError.self) { try f.vault.confirmRecoveryCopied(mark: mark) }

        #expect(error?.couldNotLook?.reason == .serviceUnavailable("no provider"))
    }
}
