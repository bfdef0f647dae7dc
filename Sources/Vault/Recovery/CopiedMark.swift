import JSON
import GateProtocol
import Slots
import VaultRules

/// The person's "I wrote the recovery code down" mark, bound to the code it was made for.
///
/// Kept in `<config>/recovery.json` beside the mode record: a random salt, a keyed BLAKE2b fingerprint of
/// the code (never the code) and, for a code in the device slot, the public tag of its sealed file
/// (`Slot.storedTag`). The mark counts only while it matches what is in the slot, so a new code clears it
/// without anyone remembering to. The tag lets `recovery status` judge a device-slot code without
/// decrypting it (and so without unsealing the device key outside PAM); a code sealed again (a move,
/// `device-key seal`) has a new tag and reads as not marked until it is confirmed again.
public struct CopiedMark: Sendable {
    public let folder: String
    var path: String { "\(folder)/recovery.json" }

    public init(folder: String) {
        self.folder = folder
    }

    /// The file's contents: `{"fingerprint": HEX, "salt": HEX, "stored": HEX, "version": 1}` (`stored`
    /// only for a code whose slot has a stored tag).
    struct Document: JSONDocument {
        var version: Int
        var salt: String
        var fingerprint: String
        var stored: String?

        init(version: Int, salt: String, fingerprint: String, stored: String?) {
            self.version = version
            self.salt = salt
            self.fingerprint = fingerprint
            self.stored = stored
        }

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the copied mark")
            version = try fields.required("version", \.intValue)
            salt = try fields.required("salt", \.stringValue)
            fingerprint = try fields.required("fingerprint", \.stringValue)
            stored = try fields.optional("stored", \.stringValue)
        }

        package var json: JSONValue {
            JSONValue.object(dropping: ["version": .integer(version), "salt": .string(salt),
                                        "fingerprint": .string(fingerprint), "stored": stored.map { .string($0) }])
        }
    }

    /// Records that `code` was copied down; `storedTag`: the public tag of its stored form, when its slot has one.
    public func set(for code: SecretBytes, storedTag: [UInt8]? = nil) throws(VaultError) {
        let salt = SecretBytes.random(count: 32)
        let doc = Document(version: 1, salt: Hex.encode(salt), fingerprint: Hex.encode(Fingerprint.of(code, salt: salt)),
                           stored: storedTag.map(Hex.encodePublic))
        do {
            try SecureFile.ensurePrivateFolder(folder)
            try SecureFile.write(path, JSONWriter.bytes(doc.json))
        } catch {
            throw .slot(error)
        }
    }

    /// Whether the mark was made for exactly `code`.
    public func matches(_ code: SecretBytes) throws(VaultError) -> Bool {
        guard let doc = try load() else { return false }
        guard let salt = Hex.decode(doc.salt), let expected = Hex.decode(doc.fingerprint) else { throw invalid }
        let actual = Fingerprint.of(code, salt: salt)
        return actual.constantTimeEquals(expected)
    }

    /// Whether the mark was made for the stored form whose public tag is `tag` (no secret is needed). A
    /// mark that records no stored tag was made for a code whose slot had none (the sync slot) or by an
    /// older vaultctl: it cannot vouch for this one, so it does not count (confirm again to mark it).
    public func matches(storedTag tag: [UInt8]) throws(VaultError) -> Bool {
        guard let doc = try load() else { return false }
        guard let stored = doc.stored else { return false }
        guard stored.utf8.count == tag.count * 2, Hex.decode(stored) != nil else { throw invalid }
        return stored == Hex.encodePublic(tag)
    }

    /// The mark's document; nil when there is none.
    private func load() throws(VaultError) -> Document? {
        let bytes: [UInt8]?
        do {
            guard try SecureFile.privateFolderExists(folder) else { return nil }
            bytes = try SecureFile.readPublic(path, maximumCount: 4096)
        } catch {
            throw .slot(error)
        }
        guard let bytes else { return nil }
        guard let doc = try? Document(jsonBytes: bytes), doc.version == 1 else { throw invalid }
        return doc
    }

    private var invalid: VaultError {
        .configuration(path: path, detail: "it is not a valid copied mark; remove it and confirm again")
    }

    /// Whether a mark is there (for this code or, left by an older vaultctl, an earlier one); reads no code.
    public func isPresent() throws(VaultError) -> Bool {
        do {
            guard try SecureFile.privateFolderExists(folder) else { return false }
            return try SecureFile.privateFileExists(path)
        } catch {
            throw .slot(error)
        }
    }

    /// Removes the mark (when the code is deleted).
    public func clear() throws(VaultError) {
        do { try SecureFile.remove(path) } catch { throw .slot(error) }
    }
}

/// A keyed BLAKE2b-256 fingerprint: reveals nothing about a 160-bit code, and differs for every salt.
enum Fingerprint {
    static func of(_ code: SecretBytes, salt: SecretBytes) -> SecretBytes {
        code.withUnsafeBytes { Hashing.keyedHash(message: $0, key: salt) }
    }
}
