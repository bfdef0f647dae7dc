import Slots

/// HKDF with HMAC-SHA-256 (RFC 5869): the key derivation of the Secret Service session algorithm.
///
/// The Secret Service derives its AES key as `HKDF-SHA256(IKM = shared secret, salt = none, info = empty)`,
/// as libsecret's `egg_hkdf_perform` does. A missing salt is, per RFC 5869 §2.2, 32 zero bytes. The
/// intermediates (the pseudorandom key, each block `T(i)`) live in wiped `SecretBytes` memory.
enum HKDFSHA256 {
    /// Bytes of SHA-256 output (RFC 5869's `HashLen`).
    static let hashBytes = 32

    /// Most bytes HKDF may produce: 255 blocks.
    static let maximumCount = 255 * hashBytes

    /// Extract then expand: `count` bytes of key derived from `inputKey`.
    ///
    /// One wiped buffer holds the output and, after it, the scratch (PRK and `T(i)`), wiped by the final
    /// `truncate`: each `SecretBytes` costs an `mmap`, `mprotect`s and an `mlock` (about 20 µs).
    static func deriveKey(count: Int, inputKey: SecretBytes, salt: [UInt8] = [], info: [UInt8] = []) -> SecretBytes {
        precondition(count >= 0 && count <= maximumCount, "HKDF output length out of range")
        let out = SecretBytes(capacity: count + 2 * hashBytes)
        out.withUnsafeMutableBytes { raw, used in
            used = raw.count
            let okm = UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
            let prk = UnsafeMutableRawBufferPointer(rebasing: raw[count..<count + hashBytes])
            let block = UnsafeMutableRawBufferPointer(rebasing: raw[(count + hashBytes)...])
            inputKey.withUnsafeBytes { extract(salt: salt, inputKey: $0, into: prk) }
            expand(pseudorandomKey: UnsafeRawBufferPointer(prk), info: info, into: okm, scratch: block)
        }
        out.truncate(to: count)
        return out
    }

    /// HKDF-Extract: `PRK = HMAC-SHA256(salt, IKM)`; an empty salt stands for 32 zero bytes.
    static func extract(salt: [UInt8], inputKey: SecretBytes) -> SecretBytes {
        let prk = SecretBytes(capacity: hashBytes)
        prk.withUnsafeMutableBytes { raw, used in
            inputKey.withUnsafeBytes { extract(salt: salt, inputKey: $0, into: raw) }
            used = hashBytes
        }
        return prk
    }

    private static func extract(salt: [UInt8], inputKey: UnsafeRawBufferPointer, into prk: UnsafeMutableRawBufferPointer) {
        let key = salt.isEmpty ? [UInt8](repeating: 0, count: hashBytes) : salt
        key.withUnsafeBytes { Sodium.hmacSHA256(key: $0, message: inputKey, into: prk) }
    }

    /// HKDF-Expand: `T(i) = HMAC-SHA256(PRK, T(i−1) ‖ info ‖ i)`, concatenated into all of `okm`, with
    /// `scratch` (32 bytes, wiped by its owner) holding each `T(i)` in turn.
    private static func expand(pseudorandomKey prk: UnsafeRawBufferPointer, info: [UInt8],
                               into okm: UnsafeMutableRawBufferPointer, scratch block: UnsafeMutableRawBufferPointer) {
        var counter: UInt8 = 1
        var written = 0
        info.withUnsafeBytes { info in
            while written < okm.count {
                let previous = UnsafeRawBufferPointer(rebasing: block.prefix(counter == 1 ? 0 : hashBytes))
                withUnsafeBytes(of: counter) { i in
                    Sodium.hmacSHA256(key: prk, message: previous, info, i, into: block)
                }
                let n = min(hashBytes, okm.count - written)
                okm.baseAddress!.advanced(by: written).copyMemory(from: block.baseAddress!, byteCount: n)
                written += n
                counter &+= 1
            }
        }
    }
}
