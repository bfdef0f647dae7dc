/// The device slot: one sealed file per slot in `<state>/slots/`, under the device key in `<state>/device.key`.
///
/// `<state>` is `$XDG_STATE_HOME/vaultctl` (default `~/.local/state/vaultctl`), a 0700 folder.
public struct SealedFileSlot: Slot {
    public let mode = SlotMode.device
    public let folder: String
    let machine: MachineIdentity

    public init(folder: String, machine: MachineIdentity) {
        self.folder = folder
        self.machine = machine
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
        let (p, tag) = (path(name), machine.tag)
        try file.withTypedUnsafeBytes { (raw) throws(SlotError) in
            let h = try SealedFileFormat.parseHeader(raw, path: p)
            try SealedFileFormat.checkHeader(h, name: name, machineTag: tag, path: p)
        }
        return file
    }

    private var missingKey: SlotError {
        .tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so no sealed file can open")
    }

    /// Holds when a file for the slot is there and its header says this machine and this slot. A file that
    /// is there but is not ours to open (another machine, another slot, a damaged header) is `.unknown`
    /// with that error: not a value we can use, and not "empty" either.
    public func holding(_ name: SlotName) -> Holding {
        do throws(SlotError) {
            guard try sealedFile(name) != nil else { return .empty }
            // A file without this machine's key to open it is not a value we hold (the key's own checks
            // refuse a loose, foreign or damaged key).
            guard try DeviceKey.isPresent(folder: folder, machine: machine) else { throw missingKey }
            return .holds(locked: false)
        } catch {
            return .unknown(error)
        }
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        guard let file = try sealedFile(name) else { throw .empty(name) }
        guard let key = try DeviceKey.load(folder: folder, machine: machine, create: false) else { throw missingKey }
        let (p, tag) = (path(name), machine.tag)
        return try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
            try SealedFileFormat.open(raw, name: name, machineTag: tag, key: key.key, path: p)
        }
    }

    public func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        guard (1...SecretBytes.maximumCount).contains(secret.count) else { throw .badSecretSize(secret.count) }
        try SecureFile.ensurePrivateFolder(folder)
        try SecureFile.ensurePrivateFolder(slotsFolder)
        let key = try DeviceKey.load(folder: folder, machine: machine, create: true)!
        let sealed = SealedFileFormat.seal(secret, name: name, machineTag: machine.tag, key: key.key)
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
