#if canImport(Glibc)
import Glibc
#endif

/// The device key: 32 random bytes kept in `device.key` in the state folder, mixed with this machine's id.
///
/// File format (56 bytes): magic `VCTLKEY` + version byte 1, the 16-byte machine tag, 32 random bytes.
/// The key that seals slots is BLAKE2b(key: random bytes, message: "vaultctl device key v1\0" + machine-id),
/// so the same file on another machine derives a different key, and its header says so before we try.
struct DeviceKey {
    static let magic: [UInt8] = Array("VCTLKEY".utf8) + [1]
    static let fileName = "device.key"
    static let fileCount = 8 + 16 + 32

    /// The derived sealing key.
    let key: SecretBytes

    /// Loads the key from `folder`, creating it when there is none and `create` is set; nil when absent.
    static func load(folder: String, machine: MachineIdentity, create: Bool) throws(SlotError) -> DeviceKey? {
        let path = "\(folder)/\(fileName)"
        if let bytes = try SecureFile.read(path, maximumCount: fileCount) {
            return try parse(bytes, path: path, machine: machine)
        }
        guard create else { return nil }
        // A new key would orphan files sealed under a lost one: say so instead of quietly starting over.
        let sealed = (try? SecureFile.entries(of: "\(folder)/slots")) ?? []
        if !sealed.isEmpty {
            throw .tampered(path: path, detail: "the device key is missing while \(sealed.count) sealed slot file(s) remain in \(folder)/slots; they can never open again. Move \(folder) aside to start afresh")
        }
        let random = SecretBytes.random(count: 32)
        let file = SecretBytes(capacity: fileCount)
        magic.withUnsafeBytes { _ = file.append($0) }
        machine.tag.withUnsafeBytes { _ = file.append($0) }
        random.withUnsafeBytes { _ = file.append($0) }
        // Two first stores may race: the one whose link lands wins, the other reads the winner's key.
        let written = try file.withUnsafeBytes { (raw) throws(SlotError) -> Bool in
            try SecureFile.write(path, raw, exclusive: true)
        }
        if !written {
            guard let bytes = try SecureFile.read(path, maximumCount: fileCount) else {
                throw .io(path: path, errno: ENOENT, operation: "read the device key another vaultctl just created at")
            }
            return try parse(bytes, path: path, machine: machine)
        }
        return DeviceKey(random: random, machine: machine)
    }

    /// Whether a valid key for this machine is there (the file's own checks, without deriving the key).
    /// Only the header is read: before authentication the random bytes stay on disk.
    static func isPresent(folder: String, machine: MachineIdentity) throws(SlotError) -> Bool {
        let path = "\(folder)/\(fileName)"
        guard let (header, size) = try SecureFile.readHeader(path, count: headerCount) else { return false }
        try check(header: header, size: size, path: path, machine: machine)
        return true
    }

    /// Magic and machine tag: what says whose key a file is, and nothing secret.
    private static let headerCount = 8 + 16

    /// Refuses a file that is not a device key, or one made on another machine.
    private static func check(header: [UInt8], size: Int, path: String, machine: MachineIdentity) throws(SlotError) {
        guard size == fileCount, header.count == headerCount, Array(header[0..<8]) == magic else {
            throw .tampered(path: path, detail: "it is not a vaultctl device key")
        }
        guard Array(header[8..<24]) == machine.tag else { throw .foreignMachine(path: path) }
    }

    private static func parse(_ bytes: SecretBytes, path: String, machine: MachineIdentity) throws(SlotError) -> DeviceKey {
        let header = bytes.withUnsafeBytes { Array($0.prefix(headerCount)) }
        try check(header: header, size: bytes.count, path: path, machine: machine)
        let random = bytes.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[24..<56])) }
        return DeviceKey(random: random, machine: machine)
    }

    private init(random: SecretBytes, machine: MachineIdentity) {
        let message = Array("vaultctl device key v1\0".utf8) + machine.id
        key = message.withUnsafeBytes { Sodium.hash(count: Sodium.keyBytes, message: $0, key: random) }
    }

    /// For known-answer tests: a key derived from given random bytes.
    init(testRandom: SecretBytes, machine: MachineIdentity) {
        self.init(random: testRandom, machine: machine)
    }
}
