/// The AES-128 block cipher (FIPS 197), in constant time: no table is indexed by key or data.
///
/// The S-box is computed (see `AESSBox`); ShiftRows, MixColumns and their inverses are shifts, masks and
/// XORs on the four 32-bit columns. The state lives in two `UInt64` registers; the expanded key (11 round
/// keys, 176 bytes) lives in a wiped `SecretBytes`. A block takes about 0.6 µs (release build, this 2-core
/// test machine), so a 64 KiB secret decrypts in under 3 ms; the Secret Service mostly sends small ones.
///
/// Not `Sendable`: it owns key material (`SecretBytes` is not `Sendable`), which stays with the one session
/// that derived it.
final class AES128 {
    /// Bytes in a block.
    static let blockBytes = 16
    /// Bytes in a key.
    static let keyBytes = 16

    private static let rounds = 10
    /// Round constants (FIPS 197 §5.2): public.
    private static let roundConstants: [UInt32] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1B, 0x36]

    /// The key schedule: 44 little-endian 32-bit words.
    private let roundKeys: SecretBytes

    /// Expands `key` (exactly 16 bytes) into the round keys (FIPS 197 §5.2).
    init(key: SecretBytes) {
        precondition(key.count == Self.keyBytes, "AES-128 needs a 16-byte key")
        roundKeys = SecretBytes(capacity: 4 * 4 * (Self.rounds + 1))
        key.withUnsafeBytes { k in
            roundKeys.withUnsafeMutableBytes { raw, used in
                let w = raw.bindMemory(to: UInt32.self)
                for i in 0..<4 {
                    w[i] = UInt32(littleEndian: k.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
                }
                for i in 4..<(4 * (Self.rounds + 1)) {
                    var temp = w[i - 1]
                    if i % 4 == 0 {  // public: depends on the position only
                        // RotWord then SubWord; byte 0 is the low byte.
                        let rotated = temp >> 8 | temp << 24
                        temp = UInt32(truncatingIfNeeded: AESSBox.substitute(UInt64(rotated), 0).0)
                        temp ^= Self.roundConstants[i / 4 - 1]
                    }
                    w[i] = w[i - 4] ^ temp
                }
                used = raw.count
            }
        }
    }

    /// Encrypts the 16 bytes at `block` in place.
    func encryptBlock(_ block: UnsafeMutableRawPointer) {
        roundKeys.withUnsafeBytes { keys in
            var (low, high) = load(block)
            addRoundKey(&low, &high, keys, round: 0)
            for round in 1..<Self.rounds {
                (low, high) = AESSBox.substitute(low, high)
                (low, high) = shiftRows(low, high)
                low = mixColumns(low)
                high = mixColumns(high)
                addRoundKey(&low, &high, keys, round: round)
            }
            (low, high) = AESSBox.substitute(low, high)
            (low, high) = shiftRows(low, high)
            addRoundKey(&low, &high, keys, round: Self.rounds)
            store(low, high, block)
        }
    }

    /// Decrypts the 16 bytes at `block` in place (the straightforward inverse cipher, FIPS 197 §5.3).
    func decryptBlock(_ block: UnsafeMutableRawPointer) {
        roundKeys.withUnsafeBytes { keys in
            var (low, high) = load(block)
            addRoundKey(&low, &high, keys, round: Self.rounds)
            for step in 1..<Self.rounds {
                let round = Self.rounds - step  // 9 … 1
                (low, high) = inverseShiftRows(low, high)
                (low, high) = AESSBox.inverseSubstitute(low, high)
                addRoundKey(&low, &high, keys, round: round)
                low = inverseMixColumns(low)
                high = inverseMixColumns(high)
            }
            (low, high) = inverseShiftRows(low, high)
            (low, high) = AESSBox.inverseSubstitute(low, high)
            addRoundKey(&low, &high, keys, round: 0)
            store(low, high, block)
        }
    }
}

// MARK: - The round functions on the packed state
//
// The state's byte `r + 4c` (row r, column c) is byte `r` of column `c`; columns 0 and 1 are the low and
// high halves of `low`, columns 2 and 3 those of `high`.

@inline(__always)
private func load(_ p: UnsafeMutableRawPointer) -> (UInt64, UInt64) {
    (UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
     UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
}

@inline(__always)
private func store(_ low: UInt64, _ high: UInt64, _ p: UnsafeMutableRawPointer) {
    p.storeBytes(of: low.littleEndian, as: UInt64.self)
    p.storeBytes(of: high.littleEndian, toByteOffset: 8, as: UInt64.self)
}

@inline(__always)
private func addRoundKey(_ low: inout UInt64, _ high: inout UInt64, _ keys: UnsafeRawBufferPointer, round: Int) {
    low ^= UInt64(littleEndian: keys.loadUnaligned(fromByteOffset: 16 * round, as: UInt64.self))
    high ^= UInt64(littleEndian: keys.loadUnaligned(fromByteOffset: 16 * round + 8, as: UInt64.self))
}

/// Row `r` rotates left by `r`: new column `c` takes row `r` from old column `c + r`.
@inline(__always)
private func shiftRows(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
    let c = columns(low, high)
    return packed(pick(c.0, c.1, c.2, c.3), pick(c.1, c.2, c.3, c.0), pick(c.2, c.3, c.0, c.1), pick(c.3, c.0, c.1, c.2))
}

/// Row `r` rotates right by `r`: new column `c` takes row `r` from old column `c − r`.
@inline(__always)
private func inverseShiftRows(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
    let c = columns(low, high)
    return packed(pick(c.0, c.3, c.2, c.1), pick(c.1, c.0, c.3, c.2), pick(c.2, c.1, c.0, c.3), pick(c.3, c.2, c.1, c.0))
}

/// Row 0 of `r0`, row 1 of `r1`, row 2 of `r2`, row 3 of `r3`.
@inline(__always)
private func pick(_ r0: UInt32, _ r1: UInt32, _ r2: UInt32, _ r3: UInt32) -> UInt32 {
    (r0 & 0x0000_00FF) | (r1 & 0x0000_FF00) | (r2 & 0x00FF_0000) | (r3 & 0xFF00_0000)
}

@inline(__always)
private func columns(_ low: UInt64, _ high: UInt64) -> (UInt32, UInt32, UInt32, UInt32) {
    (UInt32(truncatingIfNeeded: low), UInt32(truncatingIfNeeded: low >> 32),
     UInt32(truncatingIfNeeded: high), UInt32(truncatingIfNeeded: high >> 32))
}

@inline(__always)
private func packed(_ c0: UInt32, _ c1: UInt32, _ c2: UInt32, _ c3: UInt32) -> (UInt64, UInt64) {
    (UInt64(c0) | UInt64(c1) << 32, UInt64(c2) | UInt64(c3) << 32)
}

/// Multiplication by `x` (i.e. 2) in GF(2⁸) of every byte, with a mask instead of a branch.
@inline(__always)
private func xtime(_ w: UInt64) -> UInt64 {
    ((w & 0x7F7F_7F7F_7F7F_7F7F) << 1) ^ (((w >> 7) & 0x0101_0101_0101_0101) &* 0x1B)
}

/// Rotates each 32-bit column of `w` right by `bits` (so byte `r + 1` comes to row `r` for 8 bits).
@inline(__always)
private func rotateColumns(_ w: UInt64, _ bits: UInt64) -> UInt64 {
    let lowMask: UInt64 = 0x0000_0000_FFFF_FFFF
    let a = w & lowMask, b = w >> 32
    let ra = ((a >> bits) | (a << (32 - bits))) & lowMask
    let rb = ((b >> bits) | (b << (32 - bits))) & lowMask
    return ra | rb << 32
}

/// MixColumns on two columns: `out_r = 2a_r ⊕ 3a_{r+1} ⊕ a_{r+2} ⊕ a_{r+3}`
/// `= xtime(a_r ⊕ a_{r+1}) ⊕ a_{r+1} ⊕ a_{r+2} ⊕ a_{r+3}`.
@inline(__always)
private func mixColumns(_ w: UInt64) -> UInt64 {
    let r8 = rotateColumns(w, 8)
    return xtime(w ^ r8) ^ r8 ^ rotateColumns(w, 16) ^ rotateColumns(w, 24)
}

/// InvMixColumns as MixColumns after adding `4(a_r ⊕ a_{r+2})` to `a_r`
/// (Daemen and Rijmen, *The Design of Rijndael*, §4.1.3).
@inline(__always)
private func inverseMixColumns(_ w: UInt64) -> UInt64 {
    let u = xtime(xtime(w ^ rotateColumns(w, 16)))
    return mixColumns(w ^ u)
}
