import Testing
@testable import SecretService
@testable import Slots

/// The client half of `dh-ietf1024-sha256-aes128-cbc-pkcs7`: key agreement, the wire format of a secret, and
/// everything a damaged or hostile answer can do. Known answers were computed once with Python
/// (`pow`, `hmac`, and `cryptography`'s AES-CBC) following libsecret's `secret-session.c`.
@Suite("SessionKeyExchange")
struct SessionKeyExchangeTests {
    // MARK: - The known-answer session

    /// Our exponent, and a server key written with leading zeros whose shared secret begins with a zero byte,
    /// so the key is only right if the secret is padded to 128 bytes before HKDF.
    static let exponent = bytes(hex: "777d15abeebdd33a513fcb79f6bff610fc05a5069c004111e9fbc094b67370de")
    static let serverKey = bytes(hex:
        "0000002cc42d95de4a9f13ec8394f9a2b0dfefe41b01d49b9106bd545974d4445bbddc474a31d711e1d2a705616bdf7f" +
        "d8eafa83db4a9983e967c5e12da48fff958ae602c6fa3319416b8577f0d4627853bdb0accf2067f3dc0b4fc037465ef1" +
        "d67d8f75f2fce45e17021ba140df6beb6599272cef1c14ee0d30dbd60a9c1b9d")
    static let iv = Array(UInt8(0xa0)...UInt8(0xaf))
    static let plaintext = "correct horse battery staple"  // 28 bytes: pad 4
    static let ciphertext = bytes(hex: "cdf4a8978a331cb5bee0bf66d7a2a891fd43b0fe51e5759178294746b9091ca6")

    static func knownKey() throws -> SessionKey {
        try #require(SessionKeyExchange(testSecretExponent: exponent).sessionKey(serverPublicKey: serverKey))
    }

    static func decrypt(_ key: SessionKey, parameters: [UInt8], value: [UInt8]) -> SecretBytes? {
        value.withUnsafeBytes { key.decrypt(parameters: parameters, value: $0) }
    }

    @Test func algorithmIsTheSecretServiceName() {
        #expect(SessionKeyExchange.algorithm == "dh-ietf1024-sha256-aes128-cbc-pkcs7")
    }

    @Test func encryptionMatchesKnownAnswer() throws {
        let sealed = try Self.knownKey().encrypt(.test(Self.plaintext), iv: Self.iv)
        #expect(sealed.parameters == Self.iv)
        #expect(hex(sealed.value) == hex(Self.ciphertext))
    }

    @Test func decryptionMatchesKnownAnswer() throws {
        let plain = try #require(Self.decrypt(try Self.knownKey(), parameters: Self.iv, value: Self.ciphertext))
        #expect(plain.testBytes == Array(Self.plaintext.utf8))
    }

    // MARK: - Public keys

    @Test func publicKeyOfExponentOneIsTheGenerator() {
        #expect(SessionKeyExchange(testSecretExponent: [1]).publicKey == [UInt8](repeating: 0, count: 127) + [2])
        #expect(SessionKeyExchange(testSecretExponent: [2]).publicKey == [UInt8](repeating: 0, count: 127) + [4])
    }

    /// 2^x here is below 2¹⁰¹⁶; the key on the wire is still 128 bytes, left-padded (KWallet refuses shorter).
    @Test func publicKeyIsAlways128Bytes() {
        let exchange = SessionKeyExchange(testSecretExponent:
            bytes(hex: "f74b8a709ed8a6489da8574f514fcd727ee10427467d0ae31d0c8a7e1e8a1efd"))
        #expect(exchange.publicKey.count == 128)
        #expect(hex(exchange.publicKey) == "00" +
            "7e0c1e117e0d24d6fea3c5a9706c2dbcf66c5ceb73aafade75f3f193ccc55e1cb48b287812090f49f87b2564e134ec82" +
            "a7519a565c96e75aa5dd23484e6ecd8c4da986b389af0a47484ca7347adfaa163dc5449d9900873dca7083a56418bf94" +
            "67569f7da0c5992101bfdfb73b9606d0cc9cbae797d026b66e599952f2def0")
    }

    @Test func freshExchangesHaveDifferentValidPublicKeys() {
        let a = SessionKeyExchange(), b = SessionKeyExchange()
        #expect(a.publicKey != b.publicKey)
        for key in [a.publicKey, b.publicKey] {
            #expect(key.count == 128)
            #expect(SessionKeyExchange().sessionKey(serverPublicKey: key) != nil, "a valid group element")
        }
    }

    // MARK: - Round trips

    @Test func twoExchangesAgreeOnTheSameSecret() throws {
        let a = SessionKeyExchange(), b = SessionKeyExchange()
        let ab = try #require(a.sharedSecret(serverPublicKey: b.publicKey))
        let ba = try #require(b.sharedSecret(serverPublicKey: a.publicKey))
        #expect(ab.count == 128)
        #expect(ab.constantTimeEquals(ba))
    }

    @Test(arguments: [1, 15, 16, 17, 1000, 65536])
    func secretsSurviveTheRoundTrip(length: Int) throws {
        let a = SessionKeyExchange(), b = SessionKeyExchange()
        let client = try #require(a.sessionKey(serverPublicKey: b.publicKey))
        let server = try #require(b.sessionKey(serverPublicKey: a.publicKey))
        let secret = SecretBytes.random(count: length)
        let sealed = client.encrypt(secret)
        #expect(sealed.parameters.count == 16)
        #expect(sealed.value.count == (length / 16 + 1) * 16)
        let opened = try #require(Self.decrypt(server, parameters: sealed.parameters, value: sealed.value))
        #expect(opened.constantTimeEquals(secret))
        let back = server.encrypt(opened)
        let reopened = try #require(Self.decrypt(client, parameters: back.parameters, value: back.value))
        #expect(reopened.constantTimeEquals(secret))
    }

    @Test func eachEncryptionDrawsAFreshIV() throws {
        let key = try Self.knownKey()
        let first = key.encrypt(.test(Self.plaintext)), second = key.encrypt(.test(Self.plaintext))
        #expect(first.parameters != second.parameters)
        #expect(first.value != second.value)
    }

    // MARK: - Hostile or damaged answers

    /// RFC 2409's second Oakley group prime, big-endian.
    static let primeHex =
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
        "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
        "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"

    /// `p + delta` (−255 … 0) as 128 big-endian bytes.
    static func primePlus(_ delta: Int) -> [UInt8] {
        var p = bytes(hex: primeHex)
        p[127] = UInt8(Int(p[127]) + delta)  // the prime ends in 0xff
        return p
    }

    /// 2 and p − 2 are the smallest and largest keys a server may send.
    @Test func theEdgesOfTheGroupAreAccepted() {
        #expect(SessionKeyExchange().sessionKey(serverPublicKey: [0x02]) != nil)
        #expect(SessionKeyExchange().sessionKey(serverPublicKey: Self.primePlus(-2)) != nil)
    }

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("0", [0x00]),
        ("1", [0x01]),
        ("p − 1", Self.primePlus(-1)),
        ("p", Self.primePlus(0)),
        ("above p", [UInt8](repeating: 0xff, count: 128)),
        ("129 bytes", [0x01] + Self.primePlus(-2)),
    ])
    func invalidServerKeysAreRefused(_ what: String, key: [UInt8]) {
        #expect(SessionKeyExchange().sessionKey(serverPublicKey: key) == nil, "\(what)")
    }

    @Test(arguments: [0, 15, 17, 31, 48 + 1])
    func ciphertextOfTheWrongLengthIsRefused(length: Int) throws {
        let value = Array((Self.ciphertext + Self.ciphertext + Self.ciphertext).prefix(length))
        #expect(Self.decrypt(try Self.knownKey(), parameters: Self.iv, value: value) == nil)
    }

    @Test(arguments: [0, 15, 17, 32])
    func anIVOfTheWrongLengthIsRefused(length: Int) throws {
        let iv = Array((Self.iv + Self.iv).prefix(length))
        #expect(Self.decrypt(try Self.knownKey(), parameters: iv, value: Self.ciphertext) == nil)
    }

    @Test func aFlippedLastByteIsRefused() throws {
        var value = Self.ciphertext
        value[value.count - 1] ^= 0x01
        #expect(Self.decrypt(try Self.knownKey(), parameters: Self.iv, value: value) == nil)
    }

    /// Flipping bit 0 of the last byte of the previous block turns the final pad byte 4 into 5.
    @Test func aChangedPadByteIsRefused() throws {
        var value = Self.ciphertext
        value[15] ^= 0x01
        #expect(Self.decrypt(try Self.knownKey(), parameters: Self.iv, value: value) == nil)
    }

    @Test func theWrongKeyIsRefused() throws {
        let other = try #require(SessionKeyExchange(testSecretExponent: [0x03])
            .sessionKey(serverPublicKey: Self.serverKey))
        #expect(Self.decrypt(other, parameters: Self.iv, value: Self.ciphertext) == nil)
    }
}
