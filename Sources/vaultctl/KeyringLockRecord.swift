import SecretService
import GateProtocol
import Slots
import VaultRules
import Vault

/// Which Secret Service collection `vaultctl lock` locked, so that `vaultctl unlock` undoes exactly that:
/// the file `<state>/keyring-locked`, one line `PATH<TAB>LABEL`. Absent when `lock` locked nothing (the
/// collection was locked already, or the provider could not be asked): then `unlock` leaves the keyring alone.
public struct KeyringLockRecord: Sendable {
    public let folder: String
    var path: String { "\(folder)/keyring-locked" }

    public init(folder: String) {
        self.folder = folder
    }

    public func save(_ collection: SecretServiceSlot.LockedCollection) throws(VaultError) {
        let line = "\(collection.path)\t\(collection.label)\n"
        do {
            try SecureFile.ensurePrivateFolder(folder)
            try SecureFile.write(path, Array(line.utf8))
        } catch {
            throw .slot(error)
        }
    }

    /// The collection `lock` locked, or nil. A line that does not parse is treated as none (it only ever
    /// says what to unlock; the provider is asked, never the file believed).
    public func load() throws(VaultError) -> SecretServiceSlot.LockedCollection? {
        let bytes: [UInt8]?
        do { bytes = try SecureFile.readPublic(path, maximumCount: 4096) } catch { throw .slot(error) }
        guard let bytes, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let fields = text.split(separator: "\n").first?.split(separator: "\t", maxSplits: 1) ?? []
        guard fields.count == 2, fields[0].hasPrefix("/") else { return nil }
        return SecretServiceSlot.LockedCollection(path: String(fields[0]), label: String(fields[1]))
    }

    public func clear() throws(VaultError) {
        do { _ = try SecureFile.remove(path) } catch { throw .slot(error) }
    }
}
