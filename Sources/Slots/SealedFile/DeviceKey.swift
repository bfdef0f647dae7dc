#if canImport(Glibc)
import Glibc
#endif

/// The device key: 32 random bytes kept in `device.key` in the state folder, mixed with this machine's id
/// and, in a protected vault, with its account's id (`DeviceKeyAccount`).
///
/// File format, version 1 (56 bytes): magic `VCTLKEY` + version byte 1, the 16-byte machine tag, 32 random
/// bytes; the key that seals slots is BLAKE2b(key: random bytes, message: "vaultctl device key v1\0" +
/// machine-id), so the same file on another machine derives a different key, and its header says so before
/// we try. Version 2 (72 bytes), made for an account: magic + 2, the machine tag, the account's tag, 32 random
/// bytes; the key is BLAKE2b(key: random bytes, message: "vaultctl device key v2\0" + machine-id + "\0" +
/// account id). A version 1 key opens with or without an account (a vault from before the binding).
struct DeviceKey {
    static let magic: [UInt8] = Array("VCTLKEY".utf8) + [1]
    static let accountMagic: [UInt8] = Array("VCTLKEY".utf8) + [2]
    static let fileName = "device.key"
    static let fileCount = 8 + 16 + 32
    static let accountFileCount = 8 + 16 + 16 + 32

    /// The derived sealing key.
    let key: SecretBytes

    /// Loads the key from `folder`, creating it when there is none and `create` is set; nil when absent. A
    /// key created with `account` is made for it (version 2).
    static func load(folder: String, machine: MachineIdentity, account: DeviceKeyAccount? = nil, create: Bool) throws(SlotError) -> DeviceKey? {
        let path = "\(folder)/\(fileName)"
        if let bytes = try SecureFile.read(path, maximumCount: accountFileCount) {
            return try parse(bytes, path: path, machine: machine, account: account)
        }
        guard create else { return nil }
        // A new key would orphan files sealed under a lost one: say so instead of quietly starting over.
        let sealed = (try? SecureFile.entries(of: "\(folder)/slots")) ?? []
        if !sealed.isEmpty {
            throw .tampered(path: path, detail: "the device key is missing while \(sealed.count) sealed slot file(s) remain in \(folder)/slots; they can never open again. Move \(folder) aside to start afresh")
        }
        let random = SecretBytes.random(count: 32)
        let file = SecretBytes(capacity: account == nil ? fileCount : accountFileCount)
        (account == nil ? magic : accountMagic).withUnsafeBytes { _ = file.append($0) }
        machine.tag.withUnsafeBytes { _ = file.append($0) }
        account?.tag.withUnsafeBytes { _ = file.append($0) }
        random.withUnsafeBytes { _ = file.append($0) }
        // Two first stores may race: the one whose link lands wins, the other reads the winner's key.
        let written = try file.withUnsafeBytes { (raw) throws(SlotError) -> Bool in
            try SecureFile.write(path, raw, exclusive: true)
        }
        if !written {
            guard let bytes = try SecureFile.read(path, maximumCount: accountFileCount) else {
                throw .io(path: path, errno: ENOENT, operation: "read the device key another vaultctl just created at")
            }
            return try parse(bytes, path: path, machine: machine, account: account)
        }
        return DeviceKey(random: random, machine: machine, account: account)
    }

    /// Whether a valid key for this machine (and this account, for a key made for one) is there (the file's
    /// own checks, without deriving the key). Only the header is read: before authentication the random bytes
    /// stay on disk.
    static func isPresent(folder: String, machine: MachineIdentity, account: DeviceKeyAccount? = nil) throws(SlotError) -> Bool {
        let path = "\(folder)/\(fileName)"
        guard let (header, size) = try SecureFile.readHeader(path, count: accountHeaderCount) else { return false }
        _ = try check(header: header, size: size, path: path, machine: machine, account: account)
        return true
    }

    /// Magic, machine tag and (version 2) the account's tag: what says whose key a file is, and nothing secret.
    private static let headerCount = 8 + 16
    private static let accountHeaderCount = 8 + 16 + 16

    /// Refuses a file that is not a device key, one made on another machine, or one made for another account
    /// (or for an account, opened without one); returns whether it is made for an account.
    private static func check(header: [UInt8], size: Int, path: String, machine: MachineIdentity, account: DeviceKeyAccount?) throws(SlotError) -> Bool {
        let forAccount: Bool
        if header.count >= headerCount, Array(header[0..<8]) == magic, size == fileCount {
            forAccount = false
        } else if header.count == accountHeaderCount, Array(header[0..<8]) == accountMagic, size == accountFileCount {
            forAccount = true
        } else {
            throw .tampered(path: path, detail: "it is not a vaultctl device key")
        }
        guard Array(header[8..<24]) == machine.tag else { throw .foreignMachine(path: path) }
        if forAccount {
            guard let account, Array(header[24..<40]) == account.tag else {
                throw DeviceKeyAccount.refusal(path: path, account: account)
            }
        }
        return forAccount
    }

    private static func parse(_ bytes: SecretBytes, path: String, machine: MachineIdentity, account: DeviceKeyAccount?) throws(SlotError) -> DeviceKey {
        let header = bytes.withUnsafeBytes { Array($0.prefix(accountHeaderCount)) }
        let forAccount = try check(header: header, size: bytes.count, path: path, machine: machine, account: account)
        let start = forAccount ? accountHeaderCount : headerCount
        let random = bytes.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[start..<(start + 32)])) }
        return DeviceKey(random: random, machine: machine, account: forAccount ? account : nil)
    }

    private init(random: SecretBytes, machine: MachineIdentity, account: DeviceKeyAccount?) {
        let message = account.map { Array("vaultctl device key v2\0".utf8) + machine.id + [0] + $0.id }
            ?? Array("vaultctl device key v1\0".utf8) + machine.id
        key = message.withUnsafeBytes { Sodium.hash(count: Sodium.keyBytes, message: $0, key: random) }
    }

    /// For known-answer tests: a key derived from given random bytes.
    init(testRandom: SecretBytes, machine: MachineIdentity, account: DeviceKeyAccount? = nil) {
        self.init(random: testRandom, machine: machine, account: account)
    }
}
