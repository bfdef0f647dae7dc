import Slots

/// The client half of the Secret Service session algorithm `dh-ietf1024-sha256-aes128-cbc-pkcs7`.
///
/// `OpenSession` sends `publicKey` and receives the service's public key; `sessionKey(serverPublicKey:)` turns
/// that into the AES key both sides now share, exactly as libsecret's `secret-session.c` and `egg/egg-dh.c`
/// do it: `s = Y^x mod p` in the RFC 2409 second Oakley group (libgcrypt's `gcry_mpi_powm`), written as 128
/// big-endian bytes; `key = HKDF-SHA256(s)` (no salt, no info), 16 bytes; secrets then travel as
/// AES-128-CBC with PKCS#7 padding (`SessionKey`).
///
/// The secret exponent is 256 random bits in libgcrypt's secure memory. That is enough: a 1024-bit group
/// offers only about 80 bits of security (the number field sieve on `p` is the cheapest attack), and the
/// usual rule is an exponent of at least twice the group's strength, here 160 bits (RFC 3526's table sizes its
/// exponents that way), because generic attacks on an `n`-bit exponent (Pollard's kangaroo) take `2^(n/2)`
/// steps. 256 bits give 2¹²⁸ against those; a full 1024-bit exponent, as libsecret draws, would only make
/// the exchange four times slower. The server cannot tell the difference.
///
/// Not `Sendable`: it holds the secret exponent; one exchange belongs to one session opened by one task.
final class SessionKeyExchange {
    /// The algorithm name `OpenSession` takes.
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Bits in the secret exponent.
    static let exponentBits = 256

    /// Bytes of a group element on the wire.
    static let elementBytes = 128

    /// The prime of RFC 2409 §6.2 ("Second Oakley Group"), the `ietf1024` of the algorithm's name. Made
    /// afresh for each use (a microsecond): a libgcrypt number is not shared between threads.
    static var prime: Gcrypt.Number { .hex(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
        "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
        "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF") }
    static var generator: Gcrypt.Number { .small(2) }

    /// `OpenSession`'s input: `2^x mod p`, big-endian, left-padded with zeros to 128 bytes. libsecret sends
    /// the shortest form, which gnome-keyring and KeePassXC read either way; KWallet refuses a key shorter
    /// than 128 bytes (one in 256 exchanges would fail).
    let publicKey: [UInt8]

    /// `x`, in libgcrypt's secure memory, never zero.
    private let secretExponent: Gcrypt.Number

    /// Makes a fresh ephemeral key pair from libgcrypt's strong random numbers.
    convenience init() {
        self.init(exponent: .secretRandom(bits: Self.exponentBits))
    }

    /// A key pair with a given exponent, for known-answer tests only: 1…32 big-endian bytes, not all zero.
    convenience init(testSecretExponent: [UInt8]) {
        precondition(!testSecretExponent.isEmpty && testSecretExponent.count <= Self.exponentBits / 8)
        let bytes = testSecretExponent.withUnsafeBytes { SecretBytes(copying: $0) }
        let exponent = Gcrypt.Number.secret(bigEndian: bytes)!
        precondition(exponent.byteCount > 0, "the secret exponent must not be zero")
        self.init(exponent: exponent)
    }

    private init(exponent: Gcrypt.Number) {
        secretExponent = exponent
        publicKey = Self.generator.power(exponent, modulo: Self.prime).publicBytes(count: Self.elementBytes)!
    }

    /// The session key agreed with a server whose public key is `serverPublicKey` (big-endian, leading
    /// zeros allowed); nil when that key is not a valid group element (empty, over 128 bytes, or not in
    /// `2…p − 2`).
    func sessionKey(serverPublicKey: [UInt8]) -> SessionKey? {
        guard let shared = sharedSecret(serverPublicKey: serverPublicKey) else { return nil }
        return SessionKey(key: HKDFSHA256.deriveKey(count: Gcrypt.AES128CBC.keyBytes, inputKey: shared))
    }

    /// `Y^x mod p`, 128 big-endian bytes in a wiped buffer; nil when `Y` is not a valid group element.
    func sharedSecret(serverPublicKey: [UInt8]) -> SecretBytes? {
        guard !serverPublicKey.isEmpty, serverPublicKey.count <= Self.elementBytes,
              let y = Gcrypt.Number.unsigned(bigEndian: serverPublicKey),
              y.compare(Self.generator) >= 0 else { return nil }
        let prime = Self.prime
        guard y.compare(prime.minus(2)) <= 0 else { return nil }  // 2 ≤ Y ≤ p − 2
        let s = y.power(secretExponent, modulo: prime)
        let out = SecretBytes(capacity: Self.elementBytes)
        let ok = out.withUnsafeMutableBytes { raw, used -> Bool in
            used = Self.elementBytes
            return s.write(bigEndian: raw, count: Self.elementBytes)
        }
        return ok ? out : nil
    }
}
