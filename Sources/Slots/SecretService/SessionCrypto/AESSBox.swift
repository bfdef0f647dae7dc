/// The AES S-box and its inverse computed in constant time, sixteen bytes at once, without any table.
///
/// A table lookup indexed by a key- or plaintext-dependent byte leaks that byte through the cache, so the
/// S-box is computed instead: `S(x) = A(x⁻¹) ⊕ 0x63` (FIPS 197 §5.1.1), where `x⁻¹ = x²⁵⁴` in GF(2⁸) modulo
/// `x⁸ + x⁴ + x³ + x + 1` (so `0⁻¹ = 0`) and `A` is the affine map. The arithmetic is *bitsliced*: the 16
/// bytes are transposed into eight 16-bit planes (plane `k` holds bit `k` of every byte), so one AND or XOR
/// works on bit `k` of all sixteen bytes, and the inversion is a fixed sequence of 4 multiplications and 7
/// squarings with no branch and no memory access that depends on the data.
///
/// Bytes travel packed in two `UInt64`s, little-endian: byte `i` of the sixteen is bits `8i…8i+7` of `low`
/// for `i < 8`, of `high` for the rest.
enum AESSBox {
    /// `S(b)` for each of the sixteen bytes.
    @inline(__always)
    static func substitute(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
        Planes(low, high).inverse.affine.bytes
    }

    /// `S⁻¹(b)` for each of the sixteen bytes.
    @inline(__always)
    static func inverseSubstitute(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
        Planes(low, high).inverseAffine.inverse.bytes
    }
}

/// Sixteen GF(2⁸) elements, bitsliced: bit `i` of `pₖ` is the coefficient of `xᵏ` in element `i`.
///
/// Written out plane by plane (no arrays, no loops) so that everything stays in registers.
private struct Planes {
    var p0: UInt16, p1: UInt16, p2: UInt16, p3: UInt16, p4: UInt16, p5: UInt16, p6: UInt16, p7: UInt16

    @inline(__always)
    init(_ p0: UInt16, _ p1: UInt16, _ p2: UInt16, _ p3: UInt16,
         _ p4: UInt16, _ p5: UInt16, _ p6: UInt16, _ p7: UInt16) {
        (self.p0, self.p1, self.p2, self.p3, self.p4, self.p5, self.p6, self.p7) = (p0, p1, p2, p3, p4, p5, p6, p7)
    }

    /// Transposes sixteen packed bytes into planes: byte `k` of the transposed `low` holds bit `k` of bytes
    /// 0…7, that of `high` bit `k` of bytes 8…15.
    @inline(__always)
    init(_ low: UInt64, _ high: UInt64) {
        let l = transpose8x8(low), h = transpose8x8(high)
        @inline(__always) func plane(_ k: UInt64) -> UInt16 {
            UInt16(truncatingIfNeeded: (l &>> (8 &* k)) & 0xFF) | UInt16(truncatingIfNeeded: (h &>> (8 &* k)) & 0xFF) &<< 8
        }
        self.init(plane(0), plane(1), plane(2), plane(3), plane(4), plane(5), plane(6), plane(7))
    }

    /// The sixteen bytes again, packed as in `init(_:_:)`.
    @inline(__always)
    var bytes: (UInt64, UInt64) {
        @inline(__always) func low(_ p: UInt16, _ k: UInt64) -> UInt64 { UInt64(p & 0xFF) &<< (8 &* k) }
        @inline(__always) func high(_ p: UInt16, _ k: UInt64) -> UInt64 { UInt64(p &>> 8) &<< (8 &* k) }
        let l = low(p0, 0) | low(p1, 1) | low(p2, 2) | low(p3, 3) | low(p4, 4) | low(p5, 5) | low(p6, 6) | low(p7, 7)
        let h = high(p0, 0) | high(p1, 1) | high(p2, 2) | high(p3, 3)
            | high(p4, 4) | high(p5, 5) | high(p6, 6) | high(p7, 7)
        return (transpose8x8(l), transpose8x8(h))
    }

    /// FIPS 197 (5.1): `b'ᵢ = bᵢ ⊕ bᵢ₊₄ ⊕ bᵢ₊₅ ⊕ bᵢ₊₆ ⊕ bᵢ₊₇ ⊕ cᵢ` (indices mod 8), `c = 0x63`.
    @inline(__always)
    var affine: Planes {
        Planes(~(p0 ^ p4 ^ p5 ^ p6 ^ p7), ~(p1 ^ p5 ^ p6 ^ p7 ^ p0), p2 ^ p6 ^ p7 ^ p0 ^ p1, p3 ^ p7 ^ p0 ^ p1 ^ p2,
               p4 ^ p0 ^ p1 ^ p2 ^ p3, ~(p5 ^ p1 ^ p2 ^ p3 ^ p4), ~(p6 ^ p2 ^ p3 ^ p4 ^ p5), p7 ^ p3 ^ p4 ^ p5 ^ p6)
    }

    /// FIPS 197 §5.3.2, the inverse: `bᵢ = b'ᵢ₊₂ ⊕ b'ᵢ₊₅ ⊕ b'ᵢ₊₇ ⊕ dᵢ` (indices mod 8), `d = 0x05`.
    @inline(__always)
    var inverseAffine: Planes {
        Planes(~(p2 ^ p5 ^ p7), p3 ^ p6 ^ p0, ~(p4 ^ p7 ^ p1), p5 ^ p0 ^ p2,
               p6 ^ p1 ^ p3, p7 ^ p2 ^ p4, p0 ^ p3 ^ p5, p1 ^ p4 ^ p6)
    }

    /// `x²⁵⁴`, which is `x⁻¹` for `x ≠ 0` and 0 for 0: 4 multiplications and 7 squarings, always.
    @inline(__always)
    var inverse: Planes {
        let x2 = squared
        let x3 = x2 * self
        let x12 = x3.squared.squared
        let x15 = x12 * x3
        let x240 = x15.squared.squared.squared.squared
        return x240 * x12 * x2  // x²⁵²·x² = x²⁵⁴
    }

    /// Squaring, which is linear in GF(2⁸): coefficient `i` moves to `2i`, then the reduction.
    @inline(__always)
    var squared: Planes {
        Planes.reduced(p0, 0, p1, 0, p2, 0, p3, 0, p4, 0, p5, 0, p6, 0, p7)
    }

    /// Carry-less schoolbook multiplication, `cₖ = Σ aᵢ·bₖ₋ᵢ`, then the reduction.
    @inline(__always)
    static func * (a: Planes, b: Planes) -> Planes {
        let (a0, a1, a2, a3, a4, a5, a6, a7) = (a.p0, a.p1, a.p2, a.p3, a.p4, a.p5, a.p6, a.p7)
        let (b0, b1, b2, b3, b4, b5, b6, b7) = (b.p0, b.p1, b.p2, b.p3, b.p4, b.p5, b.p6, b.p7)
        let c0 = a0 & b0
        let c1 = a0 & b1 ^ a1 & b0
        let c2 = a0 & b2 ^ a1 & b1 ^ a2 & b0
        let c3 = a0 & b3 ^ a1 & b2 ^ a2 & b1 ^ a3 & b0
        let c4 = a0 & b4 ^ a1 & b3 ^ a2 & b2 ^ a3 & b1 ^ a4 & b0
        let c5 = a0 & b5 ^ a1 & b4 ^ a2 & b3 ^ a3 & b2 ^ a4 & b1 ^ a5 & b0
        let c6 = a0 & b6 ^ a1 & b5 ^ a2 & b4 ^ a3 & b3 ^ a4 & b2 ^ a5 & b1 ^ a6 & b0
        let c7 = a0 & b7 ^ a1 & b6 ^ a2 & b5 ^ a3 & b4 ^ a4 & b3 ^ a5 & b2 ^ a6 & b1 ^ a7 & b0
        let c8 = a1 & b7 ^ a2 & b6 ^ a3 & b5 ^ a4 & b4 ^ a5 & b3 ^ a6 & b2 ^ a7 & b1
        let c9 = a2 & b7 ^ a3 & b6 ^ a4 & b5 ^ a5 & b4 ^ a6 & b3 ^ a7 & b2
        let c10 = a3 & b7 ^ a4 & b6 ^ a5 & b5 ^ a6 & b4 ^ a7 & b3
        let c11 = a4 & b7 ^ a5 & b6 ^ a6 & b5 ^ a7 & b4
        let c12 = a5 & b7 ^ a6 & b6 ^ a7 & b5
        let c13 = a6 & b7 ^ a7 & b6
        let c14 = a7 & b7
        return reduced(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14)
    }

    /// Reduces `Σ cₖxᵏ` (k ≤ 14) modulo `x⁸ + x⁴ + x³ + x + 1`, using
    /// x⁸ = 0x1b, x⁹ = 0x36, x¹⁰ = 0x6c, x¹¹ = 0xd8, x¹² = 0xab, x¹³ = 0x4d, x¹⁴ = 0x9a.
    @inline(__always)
    private static func reduced(_ c0: UInt16, _ c1: UInt16, _ c2: UInt16, _ c3: UInt16, _ c4: UInt16,
                                _ c5: UInt16, _ c6: UInt16, _ c7: UInt16, _ c8: UInt16, _ c9: UInt16,
                                _ c10: UInt16, _ c11: UInt16, _ c12: UInt16, _ c13: UInt16, _ c14: UInt16) -> Planes {
        Planes(c0 ^ c8 ^ c12 ^ c13,
               c1 ^ c8 ^ c9 ^ c12 ^ c14,
               c2 ^ c9 ^ c10 ^ c13,
               c3 ^ c8 ^ c10 ^ c11 ^ c12 ^ c13 ^ c14,
               c4 ^ c8 ^ c9 ^ c11 ^ c14,
               c5 ^ c9 ^ c10 ^ c12,
               c6 ^ c10 ^ c11 ^ c13,
               c7 ^ c11 ^ c12 ^ c14)
    }
}

/// Transposes the 8×8 bit matrix whose row `i` is byte `i` (bit `k` of byte `i` ↔ bit `i` of byte `k`).
/// Hacker's Delight §7-3: three delta swaps; it is its own inverse.
@inline(__always)
private func transpose8x8(_ x: UInt64) -> UInt64 {
    var x = x
    var t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA
    x ^= t ^ (t << 7)
    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC
    x ^= t ^ (t << 14)
    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0
    x ^= t ^ (t << 28)
    return x
}
