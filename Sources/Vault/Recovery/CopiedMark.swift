import Slots

/// The person's "I wrote the recovery code down" mark, bound to the code it was made for.
///
/// Kept in `<config>/recovery.json` beside the mode record: a random salt and a keyed BLAKE2b fingerprint
/// of the code (never the code). The mark counts only while the fingerprint matches the code in the slot,
/// so a new code clears it without anyone remembering to.
public struct CopiedMark: Sendable {
    public let folder: String
    var path: String { "\(folder)/recovery.json" }

    public init(folder: String) {
        self.folder = folder
    }

    /// The file's contents: `{"fingerprint": HEX, "salt": HEX, "version": 1}`.
    struct Document: JSONDocument {
        var version: Int
        var salt: String
        var fingerprint: String

        init(version: Int, salt: String, fingerprint: String) {
            self.version = version
            self.salt = salt
            self.fingerprint = fingerprint
        }

        init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the copied mark")
            version = try fields.required("version", \.intValue)
            salt = try fields.required("salt", \.stringValue)
            fingerprint = try fields.required("fingerprint", \.stringValue)
        }

        var json: JSONValue {
            .object(["version": .integer(version), "salt": .string(salt), "fingerprint": .string(fingerprint)])
        }
    }

    /// Records that `code` was copied down.
    public func set(for code: SecretBytes) throws(VaultError) {
        let salt = SecretBytes.random(count: 32)
        let doc = Document(version: 1, salt: Hex.encode(salt), fingerprint: Hex.encode(Fingerprint.of(code, salt: salt)))
        do {
            try SecureFile.ensurePrivateFolder(folder)
            try SecureFile.write(path, JSONWriter.bytes(doc.json))
        } catch {
            throw .slot(error)
        }
    }

    /// Whether the mark was made for exactly `code`.
    public func matches(_ code: SecretBytes) throws(VaultError) -> Bool {
        let bytes: [UInt8]?
        do {
            guard try SecureFile.privateFolderExists(folder) else { return false }
            bytes = try SecureFile.readPublic(path, maximumCount: 4096)
        } catch {
            throw .slot(error)
        }
        guard let bytes else { return false }
        guard let doc = try? Document(jsonBytes: bytes),
              doc.version == 1, let salt = Hex.decode(doc.salt), let expected = Hex.decode(doc.fingerprint) else {
            throw .configuration(path: path, detail: "it is not a valid copied mark; remove it and confirm again")
        }
        let actual = Fingerprint.of(code, salt: salt)
        return actual.constantTimeEquals(expected)
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

/// Lowercase hex for salts and fingerprints (not secrets).
enum Hex {
    static func encode(_ s: SecretBytes) -> String {
        s.withUnsafeBytes { raw in
            let digits = Array("0123456789abcdef".utf8)
            var out = [UInt8]()
            for b in raw {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 15)])
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    static func decode(_ text: String) -> SecretBytes? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0, chars.count <= 128 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        let out = SecretBytes(capacity: chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            var b = hi << 4 | lo
            withUnsafeBytes(of: &b) { _ = out.append($0) }
            i += 2
        }
        return out
    }
}
