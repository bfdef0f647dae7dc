/// PKCS#7 padding (RFC 5652 §6.3) for 16-byte blocks, the "pkcs7" of the Secret Service session algorithm.
///
/// Padding always adds 1…16 bytes, each holding the pad length (a whole block when the data is already a
/// multiple of 16), exactly as libsecret's `secret-session.c` does.
enum PKCS7Padding {
    static let blockBytes = 16

    /// How many bytes padding adds to `count` bytes.
    static func padCount(for count: Int) -> Int { blockBytes - count % blockBytes }

    /// The pad length (1…16) of a decrypted last block, or 0 when it is not valid PKCS#7. It reads the whole
    /// block with masks and never exits early, so its time does not depend on where the padding fails.
    static func validPadding(_ last: UnsafeRawBufferPointer) -> Int {
        precondition(last.count == blockBytes)
        let n = UInt32(last[blockBytes - 1])
        // good is all ones while every check holds: 1 ≤ n ≤ 16 …
        var good = lessOrEqualMask(1, n) & lessOrEqualMask(n, UInt32(blockBytes))
        // … and each of the last n bytes equals n.
        for i in 0..<blockBytes {
            let distanceFromEnd = UInt32(blockBytes - i)  // 16 … 1, public
            let inPad = lessOrEqualMask(distanceFromEnd, n)
            good &= ~inPad | equalMask(UInt32(last[i]), n)
        }
        return Int(n & good)
    }

    /// All ones when `a ≤ b`, else zero (both < 2³¹), without a branch.
    @inline(__always)
    private static func lessOrEqualMask(_ a: UInt32, _ b: UInt32) -> UInt32 {
        ((b &- a) >> 31) &- 1  // b − a is negative (top bit set) exactly when a > b
    }

    /// All ones when `a == b`, else zero, without a branch.
    @inline(__always)
    private static func equalMask(_ a: UInt32, _ b: UInt32) -> UInt32 {
        let d = a ^ b
        return ((d | (0 &- d)) >> 31) &- 1
    }
}
