/// Constant-time modular exponentiation modulo a public 1024-bit modulus, by Montgomery arithmetic.
///
/// Numbers are 16 little-endian 64-bit limbs. Multiplication is Montgomery's CIOS method (Koç, Acar and
/// Kaliski, "Analyzing and Comparing Montgomery Multiplication Algorithms", 1996) with `R = 2¹⁰²⁴`, ending in a
/// subtraction of the modulus that is always computed and kept or dropped by a mask. Exponentiation uses a
/// fixed 4-bit window over every bit of the exponent: four squarings and one multiplication per window,
/// whatever the bits, with the multiplier read out of a 16-entry table by scanning all of it. So neither the
/// sequence of operations nor any memory address depends on the exponent; only its public length does.
///
/// All working values (the table of powers, the accumulator) live in the wiped `SecretBytes` of the result.
struct Montgomery1024: Sendable {  // Sendable: only public constants of the modulus
    /// Limbs in a number.
    static let limbCount = 16
    /// Bytes in a number.
    static let byteCount = 128

    /// The modulus, odd, with its top bit set.
    let modulus: [UInt64]
    /// `−modulus⁻¹ mod 2⁶⁴`.
    let m0Inverse: UInt64
    /// `R mod modulus`: 1 in Montgomery form.
    let one: [UInt64]
    /// `R² mod modulus`, which takes a number into Montgomery form.
    let rSquared: [UInt64]

    /// Precomputes the constants for `modulus` (public, so this need not be constant time).
    init(modulus: [UInt64]) {
        precondition(modulus.count == Self.limbCount && modulus[0] & 1 == 1 && modulus[Self.limbCount - 1] >> 63 == 1,
                     "the modulus must be odd and exactly 1024 bits long")
        self.modulus = modulus
        // Newton's iteration doubles the correct low bits of the inverse each step: 1 → 2 → … → 64.
        var inverse: UInt64 = 1
        for _ in 0..<6 { inverse = inverse &* (2 &- modulus[0] &* inverse) }
        m0Inverse = 0 &- inverse
        // R/2 < modulus < R, so R mod modulus = R − modulus, the 1024-bit two's complement of the modulus.
        var r = [UInt64](repeating: 0, count: Self.limbCount)
        var borrow: UInt64 = 0
        for j in 0..<Self.limbCount {
            (r[j], borrow) = subtractWithBorrow(0, modulus[j], borrow)
        }
        one = r
        // R² mod modulus, cheaply (this runs once per process, at the first exchange): double R mod modulus
        // once, then square ten times in Montgomery form, where squaring takes 2ᵏ·R to 2²ᵏ·R; so 2¹·R becomes
        // 2¹⁰²⁴·R = R².
        var carry: UInt64 = 0
        for j in 0..<Self.limbCount {
            let next = r[j] >> 63
            r[j] = r[j] << 1 | carry
            carry = next
        }
        var reduced = r
        borrow = 0
        for j in 0..<Self.limbCount {
            (reduced[j], borrow) = subtractWithBorrow(r[j], modulus[j], borrow)
        }
        if carry == 1 || borrow == 0 { r = reduced }
        var scratch = [UInt64](repeating: 0, count: Self.limbCount + 2)
        let m0Inverse = m0Inverse
        r.withUnsafeMutableBufferPointer { r in
            modulus.withUnsafeBufferPointer { m in
                scratch.withUnsafeMutableBufferPointer { t in
                    for _ in 0..<10 {
                        multiply(r.baseAddress!, r.baseAddress!, r.baseAddress!, m.baseAddress!, m0Inverse, t.baseAddress!)
                    }
                }
            }
        }
        rSquared = r
    }

    /// `base^exponent mod modulus` as 128 big-endian bytes.
    ///
    /// - Parameters:
    ///   - base: 16 limbs, less than the modulus (public: the group element being raised).
    ///   - exponent: big-endian bytes (secret); every one of its `8 × count` bits is processed.
    func power(_ base: [UInt64], exponent: UnsafeRawBufferPointer) -> SecretBytes {
        precondition(base.count == Self.limbCount)
        let n = Self.limbCount
        // One wiped buffer (each `SecretBytes` costs an mmap, mprotects and an mlock): the 128-byte result,
        // then the scratch, in limbs: table 16 × 16, accumulator, picked entry, CIOS workspace (18, padded to
        // 20), modulus, base. 128 + 340 × 8 = 2848 bytes, a multiple of 16 so every limb is aligned.
        let result = SecretBytes(capacity: Self.byteCount + 340 * 8)
        let m0Inverse = m0Inverse
        result.withUnsafeMutableBytes { raw, used in
            used = raw.count
            let s = (raw.baseAddress! + Self.byteCount).bindMemory(to: UInt64.self, capacity: 340)
            let table = s, acc = s + 256, pick = s + 272, t = s + 288, m = s + 308, b = s + 324
            modulus.withUnsafeBufferPointer { m.update(from: $0.baseAddress!, count: n) }
            base.withUnsafeBufferPointer { b.update(from: $0.baseAddress!, count: n) }
            rSquared.withUnsafeBufferPointer { pick.update(from: $0.baseAddress!, count: n) }
            one.withUnsafeBufferPointer { table.update(from: $0.baseAddress!, count: n) }

            // table[k] = base^k in Montgomery form.
            multiply(table + n, b, pick, m, m0Inverse, t)
            for k in 2..<16 {
                multiply(table + k * n, table + (k - 1) * n, table + n, m, m0Inverse, t)
            }

            acc.update(from: table, count: n)  // 1
            for byte in exponent {
                for half in 0..<2 {  // the high nibble, then the low one
                    for _ in 0..<4 { multiply(acc, acc, acc, m, m0Inverse, t) }
                    select(pick, table: table, index: UInt64((byte >> (4 - 4 * half)) & 0x0F))
                    multiply(acc, acc, pick, m, m0Inverse, t)
                }
            }

            // Out of Montgomery form: acc · 1 · R⁻¹.
            pick.update(repeating: 0, count: n)
            pick[0] = 1
            multiply(acc, acc, pick, m, m0Inverse, t)

            for i in 0..<Self.byteCount {
                raw[i] = UInt8(truncatingIfNeeded: acc[n - 1 - i / 8] >> (8 * (7 - UInt64(i % 8))))
            }
        }
        result.truncate(to: Self.byteCount)  // wipes the scratch
        return result
    }
}

/// `r = a·b·R⁻¹ mod m` for `a, b < m` (CIOS), in constant time. `r` may be `a` or `b`; `t` is 18 limbs of
/// scratch, left holding intermediate values for the caller to wipe.
@inline(__always)
private func multiply(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                      _ m: UnsafePointer<UInt64>, _ m0Inverse: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
    let n = Montgomery1024.limbCount
    t.update(repeating: 0, count: n + 2)
    for i in 0..<n {
        // t += a · b[i]
        let bi = b[i]
        var carry: UInt64 = 0
        for j in 0..<n {
            (carry, t[j]) = multiplyAdd(a[j], bi, t[j], carry)
        }
        let sum = UInt128(t[n]) &+ UInt128(carry)
        t[n] = UInt64(truncatingIfNeeded: sum)
        t[n + 1] = UInt64(truncatingIfNeeded: sum >> 64)
        // t = (t + q·m) / 2⁶⁴, with q chosen so the low limb vanishes.
        let q = t[0] &* m0Inverse
        (carry, _) = multiplyAdd(q, m[0], t[0], 0)
        for j in 1..<n {
            (carry, t[j - 1]) = multiplyAdd(q, m[j], t[j], carry)
        }
        let top = UInt128(t[n]) &+ UInt128(carry)
        t[n - 1] = UInt64(truncatingIfNeeded: top)
        t[n] = t[n + 1] &+ UInt64(truncatingIfNeeded: top >> 64)
    }
    // Now t < 2m (t[n] is 0 or 1). Always compute t − m into r, then keep t instead when t < m, i.e. when
    // the subtraction borrowed and t has no 2¹⁰²⁴ bit, choosing by mask.
    var borrow: UInt64 = 0
    for j in 0..<n {
        (r[j], borrow) = subtractWithBorrow(t[j], m[j], borrow)
    }
    let keep = 0 &- ((1 &- t[n]) & borrow)
    for j in 0..<n {
        r[j] = (t[j] & keep) | (r[j] & ~keep)
    }
}

/// `out = table[index]` for a secret `index` in 0…15: reads all 16 entries and masks, so the addresses
/// touched do not depend on `index`.
@inline(__always)
private func select(_ out: UnsafeMutablePointer<UInt64>, table: UnsafePointer<UInt64>, index: UInt64) {
    let n = Montgomery1024.limbCount
    out.update(repeating: 0, count: n)
    for k in 0..<16 {
        let d = UInt64(k) ^ index
        let mask = ((d | (0 &- d)) >> 63) &- 1  // all ones when d == 0
        let entry = table + k * n
        for j in 0..<n {
            out[j] |= entry[j] & mask
        }
    }
}

/// `a·b + c + d` as two limbs; it cannot overflow: (2⁶⁴−1)² + 2(2⁶⁴−1) = 2¹²⁸ − 1.
@inline(__always)
private func multiplyAdd(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> (high: UInt64, low: UInt64) {
    let product = a.multipliedFullWidth(by: b)
    let sum = (UInt128(product.high) << 64 | UInt128(product.low)) &+ UInt128(c) &+ UInt128(d)
    return (UInt64(truncatingIfNeeded: sum >> 64), UInt64(truncatingIfNeeded: sum))
}

/// `a − b − borrow` and the new borrow (0 or 1), without a branch.
@inline(__always)
private func subtractWithBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
    let difference = UInt128(a) &- UInt128(b) &- UInt128(borrow)
    return (UInt64(truncatingIfNeeded: difference), UInt64(truncatingIfNeeded: difference >> 64) & 1)
}
