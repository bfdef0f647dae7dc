/// Keyed hashing for layers above the slots (fingerprints that must not reveal what they fingerprint).
public enum Hashing {
    /// BLAKE2b-256 of `message` keyed with `key` (16–64 bytes).
    public static func keyedHash(message: UnsafeRawBufferPointer, key: SecretBytes) -> SecretBytes {
        Sodium.hash(count: 32, message: message, key: key)
    }
}
