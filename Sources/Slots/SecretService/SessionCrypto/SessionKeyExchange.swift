/// The client half of the Secret Service session algorithm `dh-ietf1024-sha256-aes128-cbc-pkcs7`.
///
/// `OpenSession` sends `publicKey` and receives the service's public key; `sessionKey(serverPublicKey:)` turns
/// that into the AES key both sides now share, exactly as libsecret's `secret-session.c` does it:
/// `s = Y^x mod p` (`ModP1024`), written as 128 big-endian bytes; `key = HKDF-SHA256(s)` (no salt, no info),
/// 16 bytes; secrets then travel as AES-128-CBC with PKCS#7 padding (`SessionKey`).
///
/// The secret exponent is 256 random bits (libsodium's `randombytes_buf`). That is enough: a 1024-bit group
/// offers only about 80 bits of security (the number field sieve on `p` is the cheapest attack), and the
/// usual rule is an exponent of at least twice the group's strength, here 160 bits (RFC 3526's table sizes its
/// exponents that way), because generic attacks on an `n`-bit exponent (Pollard's kangaroo) take `2^(n/2)`
/// steps. 256 bits give 2¹²⁸ against those; a full 1024-bit exponent, as libsecret draws, would only make
/// the exchange four times slower. The server cannot tell the difference.
///
/// Not `Sendable`: it holds the secret exponent (`SecretBytes` is not `Sendable`); one exchange belongs to one
/// session opened by one task.
final class SessionKeyExchange {
    /// The algorithm name `OpenSession` takes.
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Bytes in the secret exponent.
    static let exponentBytes = 32

    /// `OpenSession`'s input: `2^x mod p`, big-endian, left-padded with zeros to 128 bytes. libsecret sends
    /// the shortest form, which gnome-keyring and KeePassXC read either way; KWallet refuses a key shorter
    /// than 128 bytes (one in 256 exchanges would fail).
    let publicKey: [UInt8]

    /// `x`, 32 big-endian bytes, never zero.
    private let secretExponent: SecretBytes

    /// Makes a fresh ephemeral key pair from libsodium's random bytes.
    convenience init() {
        var exponent = SecretBytes.random(count: Self.exponentBytes)
        while Self.isZero(exponent) {  // probability 2⁻²⁵⁶; only "zero or not" depends on the secret
            exponent = SecretBytes.random(count: Self.exponentBytes)
        }
        self.init(exponent: exponent)
    }

    /// A key pair with a given exponent, for known-answer tests only: 1…32 big-endian bytes, not all zero,
    /// left-padded to 32 bytes (so every exchange runs the same 256-bit ladder).
    convenience init(testSecretExponent: [UInt8]) {
        precondition(!testSecretExponent.isEmpty && testSecretExponent.count <= Self.exponentBytes)
        let exponent = SecretBytes(capacity: Self.exponentBytes)
        let padding = [UInt8](repeating: 0, count: Self.exponentBytes - testSecretExponent.count)
        padding.withUnsafeBytes { _ = exponent.append($0) }
        testSecretExponent.withUnsafeBytes { _ = exponent.append($0) }
        precondition(!Self.isZero(exponent), "the secret exponent must not be zero")
        self.init(exponent: exponent)
    }

    private init(exponent: SecretBytes) {
        secretExponent = exponent
        let full = ModP1024.power(.generator, exponent: exponent)
        publicKey = full.withUnsafeBytes { Array($0) }  // public
    }

    /// The session key agreed with a server whose public key is `serverPublicKey` (big-endian, leading
    /// zeros allowed); nil when that key is not a valid group element (empty, over 128 bytes, or not in
    /// `2…p − 2`).
    func sessionKey(serverPublicKey: [UInt8]) -> SessionKey? {
        guard let shared = sharedSecret(serverPublicKey: serverPublicKey) else { return nil }
        let key = HKDFSHA256.deriveKey(count: AES128.keyBytes, inputKey: shared)
        return SessionKey(key: key)
    }

    /// `Y^x mod p`, 128 big-endian bytes; nil when `Y` is not a valid group element.
    func sharedSecret(serverPublicKey: [UInt8]) -> SecretBytes? {
        guard let element = ModP1024.Element(bigEndian: serverPublicKey) else { return nil }
        return ModP1024.power(element, exponent: secretExponent)
    }

    /// Whether every byte is zero, by OR-ing all of them (no early exit).
    private static func isZero(_ bytes: SecretBytes) -> Bool {
        bytes.withUnsafeBytes { $0.reduce(0 as UInt8) { $0 | $1 } } == 0
    }
}
