import CSodium

/// The one funnel to libsodium's primitives: initialization, keyed hashing, HMAC-SHA-256, XChaCha20-Poly1305
/// and sealed boxes (X25519 + XSalsa20-Poly1305 to a public key).
/// (`SecretBytes` calls the memory functions itself: it is the memory type.)
package enum Sodium {
    static let keyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Initializes libsodium once; safe from any thread. The corresponding C function is `sodium_init`.
    static func initialize() {
        _ = initialized
    }

    private static let initialized: Bool = {
        guard sodium_init() >= 0 else { fatalError("libsodium failed to initialize") }
        return true
    }()

    /// BLAKE2b of `message` keyed with `key`, `count` bytes long, into a wiped buffer.
    /// The corresponding C function is `crypto_generichash`.
    static func hash(count: Int, message: UnsafeRawBufferPointer, key: SecretBytes) -> SecretBytes {
        initialize()
        let out = SecretBytes(capacity: count)
        out.withUnsafeMutableBytes { raw, used in
            let m = message.bindMemory(to: UInt8.self)
            key.withUnsafeBytes { k in
                let kb = k.bindMemory(to: UInt8.self)
                _ = crypto_generichash(raw.bindMemory(to: UInt8.self).baseAddress!, count,
                                       m.baseAddress, UInt64(m.count), kb.baseAddress, k.count)
            }
            used = count
        }
        return out
    }

    /// Unkeyed BLAKE2b of public bytes (machine tags), into an ordinary array.
    static func publicHash(count: Int, message: UnsafeRawBufferPointer) -> [UInt8] {
        initialize()
        let m = message.bindMemory(to: UInt8.self)
        return [UInt8](unsafeUninitializedCapacity: count) { out, n in
            _ = crypto_generichash(out.baseAddress!, count, m.baseAddress, UInt64(m.count), nil, 0)
            n = count
        }
    }

    /// Encrypts `plaintext` with XChaCha20-Poly1305, authenticating `ad`; returns ciphertext with its tag.
    /// The corresponding C function is `crypto_aead_xchacha20poly1305_ietf_encrypt`.
    static func seal(_ plaintext: SecretBytes, ad: [UInt8], nonce: [UInt8], key: SecretBytes) -> [UInt8] {
        precondition(nonce.count == nonceBytes && key.count == keyBytes)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var outLen: UInt64 = 0
        plaintext.withUnsafeBytes { p in
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &out, &outLen, p.bindMemory(to: UInt8.self).baseAddress, UInt64(p.count),
                    ad, UInt64(ad.count), nil, nonce, k.bindMemory(to: UInt8.self).baseAddress!)
            }
        }
        return out
    }

    /// Decrypts and verifies; nil when the tag does not match (wrong key, wrong `ad`, or changed bytes).
    /// The corresponding C function is `crypto_aead_xchacha20poly1305_ietf_decrypt`.
    static func open(_ ciphertext: UnsafeRawBufferPointer, ad: [UInt8], nonce: [UInt8], key: SecretBytes) -> SecretBytes? {
        guard ciphertext.count >= tagBytes, nonce.count == nonceBytes, key.count == keyBytes else { return nil }
        let out = SecretBytes(capacity: ciphertext.count - tagBytes)
        var rc: Int32 = -1
        out.withUnsafeMutableBytes { raw, used in
            var len: UInt64 = 0
            key.withUnsafeBytes { k in
                rc = crypto_aead_xchacha20poly1305_ietf_decrypt(
                    raw.bindMemory(to: UInt8.self).baseAddress, &len, nil,
                    ciphertext.bindMemory(to: UInt8.self).baseAddress!, UInt64(ciphertext.count),
                    ad, UInt64(ad.count), nonce, k.bindMemory(to: UInt8.self).baseAddress!)
            }
            used = rc == 0 ? Int(len) : 0
        }
        return rc == 0 ? out : nil
    }

    /// Bytes in an HMAC-SHA-256 tag.
    static let hmacSHA256Bytes = Int(crypto_auth_hmacsha256_BYTES)

    /// HMAC-SHA-256 (RFC 2104) under `key` of the concatenation of `message`, written to the first 32 bytes
    /// of `tag` (which may overlap a message part: the parts are all read before the tag is written).
    ///
    /// `key` may have any length (HMAC pads a short key with zeros and hashes a long one), so an empty key
    /// and 32 zero bytes give the same tag. The state holds key-derived pads and is wiped before returning.
    /// The caller supplies the output so that a chain of HMACs (HKDF) can share one wiped buffer: each
    /// `SecretBytes` costs an `mmap`, `mprotect`s and an `mlock`.
    /// The corresponding C functions are `crypto_auth_hmacsha256_init`, `crypto_auth_hmacsha256_update`
    /// and `crypto_auth_hmacsha256_final`.
    package static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer...,
                           into tag: UnsafeMutableRawBufferPointer) {
        precondition(tag.count >= hmacSHA256Bytes, "an HMAC-SHA-256 tag needs 32 bytes")
        initialize()
        var state = crypto_auth_hmacsha256_state()
        defer { sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size) }
        var zero: UInt8 = 0  // libsodium copies `keylen` bytes from `key`; never hand it a null pointer
        if let k = key.baseAddress, key.count > 0 {
            _ = crypto_auth_hmacsha256_init(&state, k.assumingMemoryBound(to: UInt8.self), key.count)
        } else {
            _ = crypto_auth_hmacsha256_init(&state, &zero, 0)
        }
        for part in message {
            guard let p = part.baseAddress, part.count > 0 else { continue }
            _ = crypto_auth_hmacsha256_update(&state, p.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
        }
        _ = crypto_auth_hmacsha256_final(&state, tag.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// Bytes of an X25519 public or secret key, and what a sealed box adds to its message.
    static let boxKeyBytes = Int(crypto_box_PUBLICKEYBYTES)
    static let boxSealBytes = Int(crypto_box_sealbytes())

    /// The X25519 key pair a 32-byte seed determines: the public key, and the secret key in a wiped buffer.
    /// The corresponding C function is `crypto_box_seed_keypair`.
    static func boxKeyPair(seed: SecretBytes) -> (publicKey: [UInt8], secretKey: SecretBytes) {
        precondition(seed.count == Int(crypto_box_SEEDBYTES))
        initialize()
        var pk = [UInt8](repeating: 0, count: boxKeyBytes)
        let sk = SecretBytes(capacity: Int(crypto_box_SECRETKEYBYTES))
        sk.withUnsafeMutableBytes { raw, used in
            seed.withUnsafeBytes { s in
                _ = crypto_box_seed_keypair(&pk, raw.bindMemory(to: UInt8.self).baseAddress!,
                                            s.bindMemory(to: UInt8.self).baseAddress!)
            }
            used = raw.count
        }
        return (pk, sk)
    }

    /// Encrypts `message` to `publicKey` with a fresh ephemeral key pair (anyone may seal; only the
    /// secret key's holder opens). The corresponding C function is `crypto_box_seal`.
    static func boxSeal(_ message: SecretBytes, to publicKey: [UInt8]) -> [UInt8] {
        precondition(publicKey.count == boxKeyBytes)
        initialize()
        var out = [UInt8](repeating: 0, count: message.count + boxSealBytes)
        message.withUnsafeBytes { m in
            _ = crypto_box_seal(&out, m.bindMemory(to: UInt8.self).baseAddress!, UInt64(m.count), publicKey)
        }
        return out
    }

    /// Opens a sealed box into a wiped buffer; nil when it was not sealed to this key pair or was changed.
    /// The corresponding C function is `crypto_box_seal_open`.
    static func boxOpen(_ sealed: UnsafeRawBufferPointer, publicKey: [UInt8], secretKey: SecretBytes) -> SecretBytes? {
        guard sealed.count > boxSealBytes, publicKey.count == boxKeyBytes else { return nil }
        initialize()
        let out = SecretBytes(capacity: sealed.count - boxSealBytes)
        var rc: Int32 = -1
        out.withUnsafeMutableBytes { raw, used in
            secretKey.withUnsafeBytes { k in
                rc = crypto_box_seal_open(raw.bindMemory(to: UInt8.self).baseAddress!,
                                          sealed.bindMemory(to: UInt8.self).baseAddress!, UInt64(sealed.count),
                                          publicKey, k.bindMemory(to: UInt8.self).baseAddress!)
            }
            used = rc == 0 ? raw.count : 0
        }
        return rc == 0 ? out : nil
    }

    /// Random bytes that are not secret (nonces). The corresponding C function is `randombytes_buf`.
    package static func randomPublic(count: Int) -> [UInt8] {
        initialize()
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }
}
