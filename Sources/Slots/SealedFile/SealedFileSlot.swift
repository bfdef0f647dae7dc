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

    /// Holds when a file for the slot is there and its header says this machine and this slot. A file that
    /// is there but is not ours to open (another machine, another slot, a damaged header) is `.unknown`
    /// with that error: not a value we can use, and not "empty" either.
    public func holding(_ name: SlotName) -> Holding {
        do throws(SlotError) {
            guard try SecureFile.privateFolderExists(folder), try SecureFile.privateFolderExists(slotsFolder),
                  let file = try SecureFile.read(path(name), maximumCount: SealedFileFormat.maximumFileCount)
            else { return .empty }
            let p = path(name)
            let tag = machine.tag
            try file.withUnsafeBytes { (raw) throws(SlotError) in
                let h = try SealedFileFormat.parseHeader(raw, path: p)
                try SealedFileFormat.checkHeader(h, name: name, machineTag: tag, path: p)
            }
            // A file without this machine's key to open it is not a value we hold (the key's own checks
            // refuse a loose, foreign or damaged key).
            guard try DeviceKey.load(folder: folder, machine: machine, create: false) != nil else {
                throw SlotError.tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so no sealed file can open")
            }
            return .holds(locked: false)
        } catch {
            return .unknown(error)
        }
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        guard try SecureFile.privateFolderExists(folder), try SecureFile.privateFolderExists(slotsFolder),
              let file = try SecureFile.read(path(name), maximumCount: SealedFileFormat.maximumFileCount)
        else { throw .empty(name) }
        // Say "another machine" / "another slot" before the key is even needed.
        try file.withUnsafeBytes { (raw) throws(SlotError) in
            let h = try SealedFileFormat.parseHeader(raw, path: path(name))
            try SealedFileFormat.checkHeader(h, name: name, machineTag: machine.tag, path: path(name))
        }
        guard let key = try DeviceKey.load(folder: folder, machine: machine, create: false) else {
            throw .tampered(path: "\(folder)/\(DeviceKey.fileName)", detail: "the device key is missing, so no sealed file can open")
        }
        return try SealedFileFormat.open(file, name: name, machineTag: machine.tag, key: key.key, path: path(name))
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
