/// The sealed slot file; its version byte names the key it is sealed under.
///
/// ```
/// version 1, under the machine-id-bound key in device.key:
/// "VCTLSEAL" | 0x01 | machine tag (16) | name length (1) | name (UTF-8) | nonce (24) | ciphertext+tag
/// version 2, under the TPM-sealed key in device.tpm2 (whose key id it names):
/// "VCTLSEAL" | 0x02 | machine tag (16) | key id (16) | name length (1) | name (UTF-8)
///            | file key sealed to the key's public key (crypto_box_seal, 80) | nonce (24) | ciphertext+tag
/// ```
/// Everything before the ciphertext is the header, authenticated as XChaCha20-Poly1305 associated data, so
/// the machine and the slot name are bound by the AEAD as well as by the key. The header is checked first
/// only to say *why* a file does not open; the AEAD decides whether it does. Because each file names its
/// key, a re-key (`device-key seal`) can replace the files one at a time while both keys exist.
enum SealedFileFormat {
    static let magic: [UInt8] = Array("VCTLSEAL".utf8)
    static let version: UInt8 = 1
    static let tpmVersion: UInt8 = 2
    static let wrappedKeyCount = 32 + 48  // Sodium.keyBytes + crypto_box_SEALBYTES
    /// Largest file a valid secret makes.
    static let maximumFileCount = 8 + 1 + 16 + 16 + 1 + SlotName.maximumLength + wrappedKeyCount + 24
        + SecretBytes.maximumCount + 16

    static func header(name: SlotName, machineTag: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let nameBytes = Array(name.rawValue.utf8)
        return magic + [version] + machineTag + [UInt8(nameBytes.count)] + nameBytes + nonce
    }

    static func seal(_ secret: SecretBytes, name: SlotName, machineTag: [UInt8], key: SecretBytes,
                     nonce: [UInt8] = Sodium.randomPublic(count: Sodium.nonceBytes)) -> [UInt8] {
        let head = header(name: name, machineTag: machineTag, nonce: nonce)
        return head + Sodium.seal(secret, ad: head, nonce: nonce, key: key)
    }

    /// Seals under the TPM-sealed key: a fresh file key encrypts the secret and is itself sealed to
    /// `key`'s public key, so no TPM is needed to store.
    static func seal(_ secret: SecretBytes, name: SlotName, machineTag: [UInt8], to key: TPMDeviceKey,
                     nonce: [UInt8] = Sodium.randomPublic(count: Sodium.nonceBytes)) -> [UInt8] {
        let fileKey = SecretBytes.random(count: Sodium.keyBytes)
        let wrapped = Sodium.boxSeal(fileKey, to: key.publicKey)
        let nameBytes = Array(name.rawValue.utf8)
        let head = magic + [tpmVersion] + machineTag + key.keyID + [UInt8(nameBytes.count)] + nameBytes + wrapped + nonce
        return head + Sodium.seal(secret, ad: head, nonce: nonce, key: fileKey)
    }

    /// What the header says, before any key is used.
    struct Header {
        let version: UInt8
        let machineTag: [UInt8]
        /// Version 2: the TPM-sealed key's id, and the file key sealed to it.
        let keyID: [UInt8]
        let wrappedKey: [UInt8]
        let name: String
        let nonce: [UInt8]
        let count: Int
    }

    static func parseHeader(_ raw: UnsafeRawBufferPointer, path: String) throws(SlotError) -> Header {
        let fixed = magic.count + 1 + 16 + 1
        guard raw.count >= fixed, Array(raw[0..<magic.count]) == magic else {
            throw .tampered(path: path, detail: "it is not a vaultctl sealed file")
        }
        let v = raw[magic.count]
        guard v == version || v == tpmVersion else {
            throw .tampered(path: path, detail: "its format version \(v) is not one this vaultctl reads")
        }
        let tag = Array(raw[(magic.count + 1)..<(magic.count + 17)])
        let idCount = v == tpmVersion ? 16 : 0
        let wrapCount = v == tpmVersion ? wrappedKeyCount : 0
        guard raw.count >= fixed + idCount else { throw .tampered(path: path, detail: "it is cut short") }
        let keyID = Array(raw[(fixed - 1)..<(fixed - 1 + idCount)])
        let nameAt = fixed + idCount
        let nameCount = Int(raw[nameAt - 1])
        let end = nameAt + nameCount + wrapCount + Sodium.nonceBytes
        guard raw.count >= end + Sodium.tagBytes else {
            throw .tampered(path: path, detail: "it is cut short")
        }
        let name = String(decoding: raw[nameAt..<(nameAt + nameCount)], as: UTF8.self)
        let wrapped = Array(raw[(nameAt + nameCount)..<(nameAt + nameCount + wrapCount)])
        let nonce = Array(raw[(end - Sodium.nonceBytes)..<end])
        return Header(version: v, machineTag: tag, keyID: keyID, wrappedKey: wrapped, name: name, nonce: nonce, count: end)
    }

    /// Checks the header against this machine and slot; says why a file is not ours.
    static func checkHeader(_ h: Header, name: SlotName, machineTag: [UInt8], path: String) throws(SlotError) {
        guard h.machineTag == machineTag else { throw .foreignMachine(path: path) }
        guard h.name == name.rawValue else {
            // The header is not authenticated yet: only a valid name may reach a message.
            guard let owner = SlotName(h.name) else { throw .tampered(path: path, detail: "its header is damaged") }
            throw .wrongSlot(path: path, belongsTo: owner.rawValue)
        }
    }

    static func open(_ file: SecretBytes, name: SlotName, machineTag: [UInt8], key: SecretBytes,
                     path: String) throws(SlotError) -> SecretBytes {
        try file.withUnsafeBytes { (raw) throws(SlotError) -> SecretBytes in
            try open(raw, name: name, machineTag: machineTag, key: key, path: path)
        }
    }

    /// `open` of the file's bytes as read (a sealed file holds no plaintext, so it needs no wiped buffer).
    static func open(_ raw: UnsafeRawBufferPointer, name: SlotName, machineTag: [UInt8], key: SecretBytes,
                     path: String) throws(SlotError) -> SecretBytes {
        let h = try parseHeader(raw, path: path)
        try checkHeader(h, name: name, machineTag: machineTag, path: path)
        guard h.version == version else {
            throw .tampered(path: path, detail: "it is sealed under the TPM-sealed key, not device.key")
        }
        let head = Array(raw[0..<h.count])
        guard let plain = Sodium.open(UnsafeRawBufferPointer(rebasing: raw[h.count...]),
                                      ad: head, nonce: h.nonce, key: key) else {
            throw .tampered(path: path, detail: "it fails authentication: it was changed or damaged")
        }
        return plain
    }
}

extension SealedFileFormat {
    /// Opens a version 2 file with the TPM-sealed key's secret key (unsealed after PAM by the caller).
    static func open(_ raw: UnsafeRawBufferPointer, name: SlotName, machineTag: [UInt8], key: TPMDeviceKey,
                     secretKey: SecretBytes, path: String) throws(SlotError) -> SecretBytes {
        let h = try parseHeader(raw, path: path)
        try checkHeader(h, name: name, machineTag: machineTag, path: path)
        guard h.version == tpmVersion, h.keyID == key.keyID else {
            throw .tampered(path: path, detail: "it is not sealed under the device key in \(key.path)")
        }
        guard let fileKey = h.wrappedKey.withUnsafeBytes({
            Sodium.boxOpen($0, publicKey: key.publicKey, secretKey: secretKey)
        }), fileKey.count == Sodium.keyBytes else {
            throw .tampered(path: path, detail: "it fails authentication: it was changed or damaged")
        }
        let head = Array(raw[0..<h.count])
        guard let plain = Sodium.open(UnsafeRawBufferPointer(rebasing: raw[h.count...]),
                                      ad: head, nonce: h.nonce, key: fileKey) else {
            throw .tampered(path: path, detail: "it fails authentication: it was changed or damaged")
        }
        return plain
    }
}
