import GateProtocol
import Slots
import VaultRules

extension Vault {
    /// The device slot as the sealed-file backend, for the device-key commands; nil for a fake backend.
    public var sealedDevice: SealedFileSlot? { device as? SealedFileSlot }

    /// `device-key seal`: after a fresh PAM authentication and under the change lock, re-keys every device
    /// slot under a new TPM-sealed key (see `SealedFileSlot.rekeyUnderTPM` for the crash-safe steps).
    ///
    /// Refused before any prompt when there is no TPM to seal with; when everything already is sealed by
    /// the TPM it says so without asking.
    public func sealDeviceKey() throws(VaultError) -> SealedFileSlot.RekeyOutcome? {
        guard let device = sealedDevice else {
            throw .configuration(path: "the device slot", detail: "it is not a sealed-file slot")
        }
        let before = try steadily { () throws(VaultError) -> SealedFileSlot.KeyState in
            do throws(SlotError) { return try device.keyState() } catch { throw .slot(error) }
        }
        if before.binding == .tpm2 && !before.machineIDKey { return nil }
        guard device.tpm != nil else {
            throw .slot(.noTPMToSeal(detail: TPMChoice.noneReason))
        }
        try gate.verify(reason: PromptReason.sealDeviceKey.text)
        return try serialized { () throws(VaultError) -> SealedFileSlot.RekeyOutcome in
            do throws(SlotError) { return try device.rekeyUnderTPM() } catch { throw .slot(error) }
        }
    }
}
