import Slots

/// The AES-128 key of one Secret Service session: encrypts secrets for the bus and decrypts what the
/// service sends, as `(parameters, value)` pairs of the `Secret` struct.
///
/// On the wire a secret is `parameters` = the 16-byte IV and `value` = AES-128-CBC ciphertext (libgcrypt,
/// `Gcrypt.AES128CBC`) of the PKCS#7-padded secret. Each encryption draws a fresh random IV. Plaintext, padded
/// or not, only ever sits in a `SecretBytes`: encryption pads and encrypts in a wiped buffer, decryption
/// copies the ciphertext into the result buffer and decrypts it in place.
///
/// Not `Sendable`: it owns the cipher handle; a session is used by the one task that opened it.
final class SessionKey {
    static let ivBytes = Gcrypt.AES128CBC.blockBytes

    private let cipher: Gcrypt.AES128CBC

    /// A session key from the 16 bytes HKDF derived; nil when libgcrypt cannot take it.
    init?(key: SecretBytes) {
        guard let cipher = Gcrypt.AES128CBC(key: key) else { return nil }
        self.cipher = cipher
    }

    /// Encrypts for the wire: (parameters: the IV, value: ciphertext).
    func encrypt(_ secret: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        encrypt(secret, iv: Sodium.randomPublic(count: Self.ivBytes))
    }

    /// Encrypts with a given IV, for known-answer tests.
    func encrypt(_ secret: SecretBytes, iv: [UInt8]) -> (parameters: [UInt8], value: [UInt8]) {
        precondition(iv.count == Self.ivBytes, "CBC needs a 16-byte IV")
        let padCount = PKCS7Padding.padCount(for: secret.count)
        let work = SecretBytes(capacity: secret.count + padCount)
        secret.withUnsafeBytes { _ = work.append($0) }
        [UInt8](repeating: UInt8(padCount), count: padCount).withUnsafeBytes { _ = work.append($0) }
        let count = work.count
        let value = work.withUnsafeMutableBytes { raw, _ -> [UInt8] in
            let blocks = UnsafeMutableRawBufferPointer(rebasing: raw.prefix(count))
            guard cipher.run(encrypting: true, blocks, iv: iv) else {
                fatalError("libgcrypt refused to encrypt a whole number of blocks")
            }
            return Array(blocks)  // ciphertext: public from here on
        }
        return (iv, value)
    }

    /// nil when the IV is not 16 bytes, the ciphertext is not a nonzero multiple of 16, or the padding is
    /// malformed (a wrong key or a damaged message).
    func decrypt(parameters iv: [UInt8], value ciphertext: UnsafeRawBufferPointer) -> SecretBytes? {
        guard iv.count == Self.ivBytes, !ciphertext.isEmpty, ciphertext.count % PKCS7Padding.blockBytes == 0 else {
            return nil
        }
        let out = SecretBytes(copying: ciphertext)
        let padCount = out.withUnsafeMutableBytes { raw, _ -> Int in
            let blocks = UnsafeMutableRawBufferPointer(rebasing: raw.prefix(ciphertext.count))
            guard cipher.run(encrypting: false, blocks, iv: iv) else { return 0 }
            return PKCS7Padding.validPadding(UnsafeRawBufferPointer(rebasing: blocks.suffix(PKCS7Padding.blockBytes)))
        }
        guard padCount > 0 else {
            out.wipe()
            return nil
        }
        out.truncate(to: ciphertext.count - padCount)
        return out
    }
}
