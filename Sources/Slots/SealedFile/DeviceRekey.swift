/// Moving a device slot set from the machine-id key to a new TPM-sealed key (`vaultctl device-key seal`).
///
/// The steps on disk, each one atomic, so that a kill at any moment leaves every slot readable under the
/// old key or the new one:
/// 1. `device.tpm2` is written beside `device.key` (exclusively; a run that finds one left by an
///    interrupted run reuses it). Before any slot changes, the TPM unseals it, so a TPM that seals but
///    cannot unseal stops the move with nothing changed.
/// 2. Each slot file still sealed under `device.key` (format version 1) is read, sealed under the new key
///    (version 2, which names the key), checked to open, and replaced by rename. A file's version says
///    which key opens it, so a half-done set reads correctly.
/// 3. Only when no file needs `device.key` any more is it removed.
/// The caller holds the change lock, so no store or delete runs beside it.
extension SealedFileSlot {
    /// Which key binds the device slots, and how far a re-key has got.
    public struct KeyState: Sendable, Equatable {
        /// `device.tpm2` is there.
        public let sealedByTPM: Bool
        /// `device.key` is there.
        public let machineIDKey: Bool
        /// Slot files sealed under each key.
        public let tpmSlots: Int
        public let machineIDSlots: Int

        /// The binding in force: nil when no key exists yet; `machine-id` while any slot still needs
        /// `device.key`.
        public var binding: DeviceKeyBinding? {
            if machineIDSlots > 0 || (machineIDKey && !sealedByTPM) { return .machineID }
            if sealedByTPM { return .tpm2 }
            return nil
        }

        /// Both keys are there: a re-key was interrupted (or a store ran beside an unfinished one).
        public var unfinished: Bool { sealedByTPM && machineIDKey }
    }

    /// Looks at the keys and the slot files' headers (no secret, no TPM).
    public func keyState() throws(SlotError) -> KeyState {
        let tpmKey = try TPMDeviceKey.load(folder: folder, machine: machine, account: account) != nil
        let idKey = try DeviceKey.isPresent(folder: folder, machine: machine, account: account)
        var (tpmSlots, idSlots) = (0, 0)
        for name in try names() {
            guard let file = try SecureFile.readPublic(path(name), maximumCount: SealedFileFormat.maximumFileCount),
                  file.count > SealedFileFormat.magic.count else { continue }
            if file[SealedFileFormat.magic.count] == SealedFileFormat.tpmVersion { tpmSlots += 1 } else { idSlots += 1 }
        }
        return KeyState(sealedByTPM: tpmKey, machineIDKey: idKey, tpmSlots: tpmSlots, machineIDSlots: idSlots)
    }

    /// What a re-key did.
    public struct RekeyOutcome: Sendable, Equatable {
        /// Slot files moved to the new key by this run.
        public let resealed: Int
        /// Whether this run made the TPM-sealed key (false: it was there from an interrupted run, or the
        /// vault already was sealed by the TPM).
        public let createdKey: Bool
        /// Whether `device.key` was removed by this run.
        public let removedOldKey: Bool
    }

    /// Re-keys every slot under a TPM-sealed key (the steps above). Needs `tpm`. Call only after PAM and
    /// under the change lock: it unseals the new key once to check it.
    public func rekeyUnderTPM() throws(SlotError) -> RekeyOutcome {
        guard let tpm else {
            throw .noTPMToSeal(detail: TPMChoice.noneReason)
        }
        try SecureFile.ensurePrivateFolder(folder)
        try SecureFile.ensurePrivateFolder(slotsFolder)
        let old = try DeviceKey.load(folder: folder, machine: machine, account: account, create: false)
        var created = false
        let key: TPMDeviceKey
        if let existing = try TPMDeviceKey.load(folder: folder, machine: machine, account: account) {
            key = existing
        } else {
            if old == nil, !(try names()).isEmpty {
                throw .tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so its slot files cannot be re-sealed")
            }
            key = try TPMDeviceKey.create(folder: folder, machine: machine, account: account, tpm: tpm)
            created = true
        }
        let secretKey = try key.secretKey(tpm: tpm)  // this TPM can open what is about to be written
        var resealed = 0
        for name in try names() {
            guard let file = try SecureFile.readPublic(path(name), maximumCount: SealedFileFormat.maximumFileCount),
                  file.count > SealedFileFormat.magic.count,
                  file[SealedFileFormat.magic.count] == SealedFileFormat.version else { continue }
            guard let old else {
                throw .tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so '\(name)' cannot be re-sealed")
            }
            let value = try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
                try SealedFileFormat.open(raw, name: name, machineTag: machine.tag, key: old.key, path: path(name))
            }
            let sealed = SealedFileFormat.seal(value, name: name, machineTag: machine.tag, to: key)
            let back = try sealed.withTypedUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
                try SealedFileFormat.open(raw, name: name, machineTag: machine.tag, key: key, secretKey: secretKey,
                                          path: path(name))
            }
            guard back.constantTimeEquals(value) else {
                throw .tampered(path: path(name), detail: "its value did not read back under the new key, so it was kept as it was")
            }
            try SecureFile.write(path(name), sealed)
            resealed += 1
        }
        let removed = old != nil ? try SecureFile.remove("\(folder)/\(DeviceKey.fileName)") : false
        return RekeyOutcome(resealed: resealed, createdKey: created, removedOldKey: removed)
    }
}
