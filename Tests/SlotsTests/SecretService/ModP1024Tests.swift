import Testing
@testable import Slots

/// The 1024-bit MODP group and its constant-time exponentiation, pinned by answers computed once with
/// Python's `pow(base, x, p)`.
@Suite("ModP1024")
struct ModP1024Tests {
    static let primeHex =
        "ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74020bbea63b139b22514a08798e3404dd" +
        "ef9519b3cd3a431b302b0a6df25f14374fe1356d6d51c245e485b576625e7ec6f44c42e9a637ed6b0bff5cb6f406b7ed" +
        "ee386bfb5a899fa5ae9f24117c4b1fe649286651ece65381ffffffffffffffff"

    /// p + `delta` (|delta| small), big-endian, 128 bytes.
    static func primePlus(_ delta: Int) -> [UInt8] {
        var p = bytes(hex: primeHex)
        p[127] = UInt8(Int(p[127]) + delta)  // the prime ends in 0xff: fine for −255 … 0
        return p
    }

    static func exponent(_ bytes: [UInt8]) -> SecretBytes {
        .test([UInt8](repeating: 0, count: 32 - bytes.count) + bytes)
    }

    static func power(_ base: [UInt8], _ exponent: [UInt8]) throws -> [UInt8] {
        let element = try #require(ModP1024.Element(bigEndian: base))
        return ModP1024.power(element, exponent: Self.exponent(exponent)).testBytes
    }

    static let zeros127 = String(repeating: "00", count: 127)

    @Test func primeIsRFC2409SecondOakleyGroup() {
        #expect(hex(ModP1024.primeBytes) == Self.primeHex)
    }

    // MARK: - Known answers

    @Test func twoToTheOneIsTwoPaddedTo128Bytes() throws {
        #expect(hex(try Self.power([2], [1])) == Self.zeros127 + "02")
    }

    @Test func twoSquaredIsFour() throws {
        #expect(hex(try Self.power([2], [2])) == Self.zeros127 + "04")
    }

    @Test func allOnesExponentMatchesKnownAnswer() throws {
        let result = try Self.power([2], [UInt8](repeating: 0xff, count: 32))
        #expect(hex(result) ==
            "19e474e98599fb1b6aab89b253837bb1536b59b1486ed8b489137a7687787e0b88b14ad3998e9d5bc0835fd280368ef0" +
            "b71f76a2f18a739a98121007551b4f351404db4cf1e9b9771c1e3eac9d9ca415098e9ebacd2f3fe0b17cb2fe14ebec61" +
            "72ce41b4487694e5294056f36b315aed37a68fce5a2bc60ecc9213566dc41bf0")
    }

    static let randomExponent = "eb7a79959588532d4242aadbc8f429a479c8c2926b94b5b5749882321e35049e"

    @Test func randomExponentOfTheGeneratorMatchesKnownAnswer() throws {
        let result = try Self.power([2], bytes(hex: Self.randomExponent))
        #expect(hex(result) ==
            "1878818cc1aa80dfe9d1d2de4cf1014787180651bd0d625f084e30d6d274378edecfe43f036871d0ebd01713c8cddf24" +
            "0f07b5bcc73f8a7af7b60ec54f3af7854de84b052607e8329a06a30e5de6a17766604ff543faef0372a5763d942efc72" +
            "379077d3fdb218567bd4671c2147a9a4658266578cd352ca16489352e7ca0c25")
    }

    @Test func randomBaseAndExponentMatchKnownAnswer() throws {
        let base = bytes(hex:
            "83d8e92df2adcc0ee683acdf2060d7c4400cb70f964e03c0b4a3165de1ab3e01a5240b6020d0b29c0cf197f45625871b" +
            "82b9bfbc91ba7257dabe22cad37b17c64a894db7e48f12b96a5d670af9a3638e5b08acc213a5bf07da1b195060c40eb7" +
            "88718c966f3d88f7f4b1b64633be40f5515c61236c88c5373cf3bd58da60fb1e")
        let result = try Self.power(base, bytes(hex: Self.randomExponent))
        #expect(hex(result) ==
            "862165b7a02817d5c9ebac1929cd571b99283af04f8bc1780bca93505fb211f9087956651f0873957a7d5d244a297068" +
            "e4e75b33dc4783f6e8e693d8e7a2b532ddf8f347b187308b40705874a4524ea40447c3a3e1a96a2100874a45f14061e7" +
            "b860b445da7c08d559029b4ca15516d0fc13bf5513a2dda3501a118edb0e1f4d")
    }

    /// A base written with three leading zero bytes, and a result below 2¹⁰¹⁶ that keeps its zero byte.
    @Test func resultBelow2To1016KeepsItsLeadingZeroByte() throws {
        let base = bytes(hex:
            "0000002cc42d95de4a9f13ec8394f9a2b0dfefe41b01d49b9106bd545974d4445bbddc474a31d711e1d2a705616bdf7f" +
            "d8eafa83db4a9983e967c5e12da48fff958ae602c6fa3319416b8577f0d4627853bdb0accf2067f3dc0b4fc037465ef1" +
            "d67d8f75f2fce45e17021ba140df6beb6599272cef1c14ee0d30dbd60a9c1b9d")
        let exponent = bytes(hex: "777d15abeebdd33a513fcb79f6bff610fc05a5069c004111e9fbc094b67370de")
        let result = try Self.power(base, exponent)
        #expect(result.count == 128)
        #expect(hex(result) ==
            "0072e786cc9adac295452e8a5f39f2b783aecb8c261ce7f25845312bea7d58722bfc1d9b3bd142986bef52dcfefac0a5" +
            "aa3fb8549249fadfdb03134697e1f70ed08712c9cd2876894814f1caafe2c73488914abd8c02f54d6135a0c099bc6bb9" +
            "c4b48f410a774cc631954f02c55de6dd692a047c5a8f29006ccf836c8d2a902b")
    }

    /// Fermat: `y^(p−1) = 1`; and 2 is a square modulo p (p ≡ 7 mod 8), so `2^((p−1)/2) = 1`.
    /// Also shows that exponents longer than 32 bytes work.
    @Test func fermatsLittleTheoremHolds() throws {
        let pMinusOne = SecretBytes.test(Self.primePlus(-1))
        let three = try #require(ModP1024.Element(bigEndian: [3]))
        #expect(hex(ModP1024.power(three, exponent: pMinusOne).testBytes) == Self.zeros127 + "01")
        var half = Self.primePlus(-1)  // (p − 1) / 2: shift right by one bit
        var carry: UInt8 = 0
        for i in half.indices {
            let next = half[i] & 1
            half[i] = half[i] >> 1 | carry << 7
            carry = next
        }
        #expect(hex(ModP1024.power(.generator, exponent: .test(half)).testBytes) == Self.zeros127 + "01")
    }

    // MARK: - Which elements are accepted

    @Test(arguments: [
        [UInt8](),                                   // empty
        [0x00],                                      // 0
        [0x00, 0x00],                                // 0, longer
        [0x01],                                      // 1
        [UInt8](repeating: 0, count: 127) + [0x01],  // 1 at full length
        primePlus(-1),                               // p − 1
        primePlus(0),                                // p
        [UInt8](repeating: 0xff, count: 128),        // 2¹⁰²⁴ − 1 > p
        [0x01] + [UInt8](repeating: 0, count: 128),  // 2¹⁰²⁴
        [0x00] + primePlus(0),                       // p with a sign byte
    ])
    func elementsOutsideTwoToPMinusTwoAreRefused(bytes: [UInt8]) {
        #expect(ModP1024.Element(bigEndian: bytes) == nil)
    }

    @Test(arguments: [
        [0x02],
        [0x00, 0x00, 0x02],
        primePlus(-2),
        [0x7f] + [UInt8](repeating: 0xff, count: 127),
    ])
    func elementsFromTwoToPMinusTwoAreAccepted(bytes: [UInt8]) {
        #expect(ModP1024.Element(bigEndian: bytes) != nil)
    }

    @Test func leadingZerosDoNotChangeTheElement() {
        #expect(ModP1024.Element(bigEndian: [0, 0, 1, 2]) == ModP1024.Element(bigEndian: [1, 2]))
        // 129 bytes: a two's-complement writer adds a zero byte when the top bit is set.
        #expect(ModP1024.Element(bigEndian: [0x00] + Self.primePlus(-2)) == ModP1024.Element(bigEndian: Self.primePlus(-2)))
    }
}
