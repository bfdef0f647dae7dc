/// AES-128 in CBC mode with PKCS#7 padding (NIST SP 800-38A §6.2, RFC 5652 §6.3), the Secret Service's
/// "aes128-cbc-pkcs7".
///
/// Padding always adds 1…16 bytes, each holding the pad length (a whole block when the plaintext is already
/// a multiple of 16), exactly as libsecret's `secret-session.c` does. Plaintext, padded or not, only ever
/// sits in a `SecretBytes`: encryption pads and encrypts in a wiped buffer, decryption copies the ciphertext
/// into the result buffer and decrypts it in place.
enum AESCBC {
    /// Bytes in the initialization vector (one block).
    static let ivBytes = AES128.blockBytes

    /// Pads `plaintext` and encrypts it chained from `iv`; the result is a nonzero multiple of 16 bytes.
    static func encrypt(_ plaintext: SecretBytes, iv: [UInt8], cipher: AES128) -> [UInt8] {
        precondition(iv.count == ivBytes, "CBC needs a 16-byte IV")
        let padCount = AES128.blockBytes - plaintext.count % AES128.blockBytes
        let work = SecretBytes(capacity: plaintext.count + padCount)
        plaintext.withUnsafeBytes { _ = work.append($0) }
        let pad = [UInt8](repeating: UInt8(padCount), count: padCount)
        pad.withUnsafeBytes { _ = work.append($0) }
        let count = work.count
        return work.withUnsafeMutableBytes { raw, _ in
            let blocks = UnsafeMutableRawBufferPointer(rebasing: raw.prefix(count))
            iv.withUnsafeBytes { encryptBlocks(blocks, iv: $0, cipher: cipher) }
            return Array(blocks)  // ciphertext: public from here on
        }
    }

    /// Decrypts `ciphertext` chained from `iv` and removes the padding; nil when the IV is not 16 bytes, the
    /// ciphertext is not a nonzero multiple of 16, or the padding is malformed (a wrong key or a damaged
    /// message).
    ///
    /// The padding check reads the whole last block with masks, so its time does not depend on where it
    /// fails. (Whether it failed is visible to the caller anyway; there is no oracle to hide here, since the
    /// Secret Service sends each secret once, but it costs nothing.)
    static func decrypt(_ ciphertext: UnsafeRawBufferPointer, iv: [UInt8], cipher: AES128) -> SecretBytes? {
        guard iv.count == ivBytes, !ciphertext.isEmpty, ciphertext.count % AES128.blockBytes == 0 else {
            return nil
        }
        let out = SecretBytes(copying: ciphertext)
        let padCount = out.withUnsafeMutableBytes { raw, _ -> Int in
            let blocks = UnsafeMutableRawBufferPointer(rebasing: raw.prefix(ciphertext.count))
            iv.withUnsafeBytes { decryptBlocks(blocks, iv: $0, ciphertext: ciphertext, cipher: cipher) }
            return validPadding(UnsafeRawBufferPointer(rebasing: blocks.suffix(AES128.blockBytes)))
        }
        guard padCount > 0 else {
            out.wipe()
            return nil
        }
        out.truncate(to: ciphertext.count - padCount)
        return out
    }

    /// CBC encryption in place of whole blocks, no padding: `Cᵢ = E(Pᵢ ⊕ Cᵢ₋₁)`, `C₀ = IV`.
    static func encryptBlocks(_ blocks: UnsafeMutableRawBufferPointer, iv: UnsafeRawBufferPointer, cipher: AES128) {
        precondition(iv.count == ivBytes && blocks.count % AES128.blockBytes == 0)
        guard let base = blocks.baseAddress else { return }
        var previous = UnsafeRawPointer(iv.baseAddress!)
        for offset in stride(from: 0, to: blocks.count, by: AES128.blockBytes) {
            let block = base + offset
            xor16(block, previous)
            cipher.encryptBlock(block)
            previous = UnsafeRawPointer(block)
        }
    }

    /// CBC decryption in place of whole blocks, no padding: `Pᵢ = D(Cᵢ) ⊕ Cᵢ₋₁`; `ciphertext` is the
    /// untouched input, read for the chaining.
    static func decryptBlocks(_ blocks: UnsafeMutableRawBufferPointer, iv: UnsafeRawBufferPointer,
                              ciphertext: UnsafeRawBufferPointer, cipher: AES128) {
        precondition(iv.count == ivBytes && blocks.count == ciphertext.count && blocks.count % AES128.blockBytes == 0)
        guard let base = blocks.baseAddress, let input = ciphertext.baseAddress else { return }
        var previous = UnsafeRawPointer(iv.baseAddress!)
        for offset in stride(from: 0, to: blocks.count, by: AES128.blockBytes) {
            let block = base + offset
            cipher.decryptBlock(block)
            xor16(block, previous)
            previous = input + offset
        }
    }

    /// The pad length (1…16) of a decrypted last block, or 0 when it is not valid PKCS#7, without a
    /// branch on the data.
    static func validPadding(_ last: UnsafeRawBufferPointer) -> Int {
        precondition(last.count == AES128.blockBytes)
        let n = UInt32(last[AES128.blockBytes - 1])
        // good is all ones while every check holds: 1 ≤ n ≤ 16 …
        var good = lessOrEqualMask(1, n) & lessOrEqualMask(n, 16)
        // … and each of the last n bytes equals n.
        for i in 0..<AES128.blockBytes {
            let distanceFromEnd = UInt32(AES128.blockBytes - i)  // 16 … 1, public
            let inPad = lessOrEqualMask(distanceFromEnd, n)
            good &= ~inPad | equalMask(UInt32(last[i]), n)
        }
        return Int(n & good)
    }
}

/// All ones when `a ≤ b`, else zero (both < 2³¹), without a branch.
@inline(__always)
private func lessOrEqualMask(_ a: UInt32, _ b: UInt32) -> UInt32 {
    // b − a is negative (top bit set) exactly when a > b.
    ((b &- a) >> 31) &- 1
}

/// All ones when `a == b`, else zero, without a branch.
@inline(__always)
private func equalMask(_ a: UInt32, _ b: UInt32) -> UInt32 {
    let d = a ^ b
    return ((d | (0 &- d)) >> 31) &- 1
}

/// `block ^= other` for 16 bytes.
@inline(__always)
private func xor16(_ block: UnsafeMutableRawPointer, _ other: UnsafeRawPointer) {
    let low = block.loadUnaligned(as: UInt64.self) ^ other.loadUnaligned(as: UInt64.self)
    let high = block.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ^ other.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    block.storeBytes(of: low, as: UInt64.self)
    block.storeBytes(of: high, toByteOffset: 8, as: UInt64.self)
}
