/// The AES-128 key of one Secret Service session: encrypts secrets for the bus and decrypts what the
/// service sends, as `(parameters, value)` pairs of the `Secret` struct.
///
/// On the wire a secret is `parameters` = the 16-byte IV and `value` = AES-128-CBC ciphertext of the
/// PKCS#7-padded secret (`AESCBC`). Each encryption draws a fresh random IV.
///
/// Not `Sendable`: it owns the key schedule (`SecretBytes` is not `Sendable`); a session is used by the
/// one task that opened it.
final class SessionKey {
    private let cipher: AES128

    /// A session key from the 16 bytes HKDF derived.
    init(key: SecretBytes) {
        cipher = AES128(key: key)
    }

    /// Encrypts for the wire: (parameters: the IV, value: ciphertext).
    func encrypt(_ secret: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        let iv = Sodium.randomPublic(count: AESCBC.ivBytes)
        return encrypt(secret, iv: iv)
    }

    /// Encrypts with a given IV, for known-answer tests.
    func encrypt(_ secret: SecretBytes, iv: [UInt8]) -> (parameters: [UInt8], value: [UInt8]) {
        (iv, AESCBC.encrypt(secret, iv: iv, cipher: cipher))
    }

    /// nil when the lengths or the padding are wrong (wrong key, damaged message).
    func decrypt(parameters: [UInt8], value: UnsafeRawBufferPointer) -> SecretBytes? {
        AESCBC.decrypt(value, iv: parameters, cipher: cipher)
    }
}
