/// The sealed slot file, version 1.
///
/// ```
/// "VCTLSEAL" | version 0x01 | machine tag (16) | name length (1) | name (UTF-8) | nonce (24) | ciphertext+tag
/// ```
/// Everything before the ciphertext is the header, authenticated as XChaCha20-Poly1305 associated data, so
/// the machine and the slot name are bound by the AEAD as well as by the key. The header is checked first
/// only to say *why* a file does not open; the AEAD decides whether it does.
enum SealedFileFormat {
    static let magic: [UInt8] = Array("VCTLSEAL".utf8)
    static let version: UInt8 = 1
    /// Largest file a valid secret makes.
    static let maximumFileCount = 8 + 1 + 16 + 1 + SlotName.maximumLength + 24 + SecretBytes.maximumCount + 16

    static func header(name: SlotName, machineTag: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let nameBytes = Array(name.rawValue.utf8)
        return magic + [version] + machineTag + [UInt8(nameBytes.count)] + nameBytes + nonce
    }

    static func seal(_ secret: SecretBytes, name: SlotName, machineTag: [UInt8], key: SecretBytes,
                     nonce: [UInt8] = Sodium.randomPublic(count: Sodium.nonceBytes)) -> [UInt8] {
        let head = header(name: name, machineTag: machineTag, nonce: nonce)
        return head + Sodium.seal(secret, ad: head, nonce: nonce, key: key)
    }

    /// What the header says, before any key is used.
    struct Header {
        let machineTag: [UInt8]
        let name: String
        let nonce: [UInt8]
        let count: Int
    }

    static func parseHeader(_ raw: UnsafeRawBufferPointer, path: String) throws(SlotError) -> Header {
        let fixed = magic.count + 1 + 16 + 1
        guard raw.count >= fixed, Array(raw[0..<magic.count]) == magic else {
            throw .tampered(path: path, detail: "it is not a vaultctl sealed file")
        }
        guard raw[magic.count] == version else {
            throw .tampered(path: path, detail: "its format version \(raw[magic.count]) is not one this vaultctl reads")
        }
        let tag = Array(raw[(magic.count + 1)..<(magic.count + 17)])
        let nameCount = Int(raw[fixed - 1])
        let end = fixed + nameCount + Sodium.nonceBytes
        guard raw.count >= end + Sodium.tagBytes else {
            throw .tampered(path: path, detail: "it is cut short")
        }
        let name = String(decoding: raw[fixed..<(fixed + nameCount)], as: UTF8.self)
        let nonce = Array(raw[(fixed + nameCount)..<end])
        return Header(machineTag: tag, name: name, nonce: nonce, count: end)
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
        let head = Array(raw[0..<h.count])
        guard let plain = Sodium.open(UnsafeRawBufferPointer(rebasing: raw[h.count...]),
                                      ad: head, nonce: h.nonce, key: key) else {
            throw .tampered(path: path, detail: "it fails authentication: it was changed or damaged")
        }
        return plain
    }
}
