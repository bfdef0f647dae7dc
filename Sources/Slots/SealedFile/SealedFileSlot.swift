/// The device slot: one sealed file per slot in `<state>/slots/`, under the device key: `<state>/device.tpm2`
/// (sealed by the TPM) or `<state>/device.key` (bound to the machine id).
///
/// `<state>` is `$XDG_STATE_HOME/vaultctl` (default `~/.local/state/vaultctl`), a 0700 folder. A new vault
/// gets a TPM-sealed key when `tpm` is given (see `TPMChoice`), else a machine-id one; an existing vault
/// keeps the key it has until `device-key seal` (`rekeyUnderTPM`, in DeviceRekey.swift) moves it. Each slot file names the key it is
/// sealed under, so both kinds can be read while a re-key is under way.
public struct SealedFileSlot: Slot {
    public let mode = SlotMode.device
    public let folder: String
    let machine: MachineIdentity
    /// The TPM to seal new keys with and to unseal with; nil: none here.
    public let tpm: TPMChoice?
    /// The account a protected vault belongs to (given by vaultctl-gate): a new key is made for it, and a
    /// key made for another account is refused. nil: a vault in the state folder.
    let account: DeviceKeyAccount?

    public init(folder: String, machine: MachineIdentity, tpm: TPMChoice? = nil, account: DeviceKeyAccount? = nil) {
        self.folder = folder
        self.machine = machine
        self.tpm = tpm
        self.account = account
    }

    var slotsFolder: String { "\(folder)/slots" }
    func path(_ name: SlotName) -> String { "\(slotsFolder)/\(name.rawValue)" }

    /// The slot's sealed file with its header checked against this machine and this slot (so "another
    /// machine" / "another slot" is said before any key is needed); nil when there is none. A sealed file
    /// holds no plaintext, so it is read into an ordinary array.
    private func sealedFile(_ name: SlotName) throws(SlotError) -> [UInt8]? {
        guard try SecureFile.privateFolderExists(folder), try SecureFile.privateFolderExists(slotsFolder),
              let file = try SecureFile.readPublic(path(name), maximumCount: SealedFileFormat.maximumFileCount)
        else { return nil }
        _ = try header(of: file, name)
        return file
    }

    private func header(of file: [UInt8], _ name: SlotName) throws(SlotError) -> SealedFileFormat.Header {
        let (p, tag) = (path(name), machine.tag)
        return try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> SealedFileFormat.Header in
            let h = try SealedFileFormat.parseHeader(raw, path: p)
            try SealedFileFormat.checkHeader(h, name: name, machineTag: tag, path: p)
            return h
        }
    }

    /// The TPM-sealed key a version 2 file names, checked to be the one in the folder.
    private func tpmKey(for h: SealedFileFormat.Header, _ name: SlotName) throws(SlotError) -> TPMDeviceKey {
        guard let key = try TPMDeviceKey.load(folder: folder, machine: machine, account: account) else {
            throw .tampered(path: "\(folder)/\(TPMDeviceKey.fileName)", detail: "the TPM-sealed device key is missing, so no file sealed under it can open")
        }
        guard key.keyID == h.keyID else {
            throw .tampered(path: path(name), detail: "it is sealed under another device key than \(key.path)")
        }
        return key
    }

    /// Which key holds the slot's value: `"tpm2"` (sealed by the TPM) or `"machine-id"`; nil when the
    /// slot holds no value that opens here. Reads headers only.
    public func binding(of name: SlotName) -> String? { look(name).binding }

    /// A hash of the slot's sealed file: every write seals with a fresh nonce (and, under the TPM key, a
    /// fresh file key), so a new value, or the same one sealed again, gives another tag. Reads the file only.
    public func storedTag(of name: SlotName) -> [UInt8]? { look(name).tag }

    /// `holding`, `binding(of:)` and `storedTag(of:)` from one look at the file (the gate answers all three).
    public func look(_ name: SlotName) -> (holding: Holding, binding: String?, tag: [UInt8]?) {
        let held = holding(name)
        guard case .holds = held, let file = try? sealedFile(name), let h = try? header(of: file, name) else {
            return (held, nil, nil)
        }
        let binding = h.version == SealedFileFormat.tpmVersion ? DeviceKeyBinding.tpm2.rawValue : DeviceKeyBinding.machineID.rawValue
        let tag = (Array("vaultctl stored tag v1\0".utf8) + file).withUnsafeBytes { Sodium.publicHash(count: 32, message: $0) }
        return (held, binding, tag)
    }

    private var missingKey: SlotError {
        .tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so no sealed file can open")
    }

    /// Holds when a file for the slot is there and its header says this machine and this slot. A file that
    /// is there but is not ours to open (another machine, another slot, a damaged header) is `.unknown`
    /// with that error: not a value we can use, and not "empty" either.
    public func holding(_ name: SlotName) -> Holding {
        do throws(SlotError) {
            guard let file = try sealedFile(name) else { return .empty }
            // A file without this machine's key to open it is not a value we hold (the key's own checks
            // refuse a loose, foreign or damaged key).
            let h = try header(of: file, name)
            if h.version == SealedFileFormat.tpmVersion {
                _ = try tpmKey(for: h, name)
            } else {
                guard try DeviceKey.isPresent(folder: folder, machine: machine, account: account) else { throw missingKey }
            }
            return .holds(locked: false)
        } catch {
            return .unknown(error)
        }
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        guard let file = try sealedFile(name) else { throw .empty(name) }
        let (p, tag) = (path(name), machine.tag)
        let h = try header(of: file, name)
        if h.version == SealedFileFormat.tpmVersion {
            let key = try tpmKey(for: h, name)
            let secretKey = try key.secretKey(tpm: tpm)  // the one TPM unseal of this read
            return try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
                try SealedFileFormat.open(raw, name: name, machineTag: tag, key: key, secretKey: secretKey, path: p)
            }
        }
        guard let key = try DeviceKey.load(folder: folder, machine: machine, account: account, create: false) else { throw missingKey }
        return try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
            try SealedFileFormat.open(raw, name: name, machineTag: tag, key: key.key, path: p)
        }
    }

    /// The key a new slot file is sealed under: the TPM-sealed key when there is one; else the machine-id
    /// key when there is one (an existing vault keeps its binding until `device-key seal`); else a new key,
    /// sealed by the TPM when one is configured.
    enum WritingKey {
        case tpm(TPMDeviceKey)
        case machineID(DeviceKey)
    }

    func writingKey() throws(SlotError) -> WritingKey {
        if let key = try TPMDeviceKey.load(folder: folder, machine: machine, account: account) { return .tpm(key) }
        if let key = try DeviceKey.load(folder: folder, machine: machine, account: account, create: false) { return .machineID(key) }
        if let tpm {
            try refuseOrphans(keyPath: "\(folder)/\(TPMDeviceKey.fileName)")
            return .tpm(try TPMDeviceKey.create(folder: folder, machine: machine, account: account, tpm: tpm))
        }
        return .machineID(try DeviceKey.load(folder: folder, machine: machine, account: account, create: true)!)
    }

    /// A new key would orphan files sealed under a lost one: say so instead of quietly starting over.
    private func refuseOrphans(keyPath: String) throws(SlotError) {
        let sealed = (try? SecureFile.entries(of: slotsFolder)) ?? []
        if !sealed.isEmpty {
            throw .tampered(path: keyPath, detail: "the device key is missing while \(sealed.count) sealed slot file(s) remain in \(slotsFolder); they can never open again. Move \(folder) aside to start afresh")
        }
    }

    func seal(_ secret: SecretBytes, _ name: SlotName, under key: WritingKey) -> [UInt8] {
        switch key {
        case .tpm(let k): return SealedFileFormat.seal(secret, name: name, machineTag: machine.tag, to: k)
        case .machineID(let k): return SealedFileFormat.seal(secret, name: name, machineTag: machine.tag, key: k.key)
        }
    }

    public func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        guard (1...SecretBytes.maximumCount).contains(secret.count) else { throw .badSecretSize(secret.count) }
        try SecureFile.ensurePrivateFolder(folder)
        try SecureFile.ensurePrivateFolder(slotsFolder)
        let sealed = seal(secret, name, under: try writingKey())
        try SecureFile.write(path(name), sealed)
    }

    @discardableResult
    public func delete(_ name: SlotName) throws(SlotError) -> Bool {
        guard try SecureFile.privateFolderExists(folder), try SecureFile.privateFolderExists(slotsFolder) else {
            return false
        }
        return try SecureFile.remove(path(name))
    }

    public func names() throws(SlotError) -> [SlotName] {
        guard try SecureFile.privateFolderExists(folder), try SecureFile.privateFolderExists(slotsFolder) else {
            return []
        }
        return try SecureFile.entries(of: slotsFolder).compactMap(SlotName.init).sorted()
    }
}
