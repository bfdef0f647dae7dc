import Testing
import Slots

/// The zeroizing buffer is really wiped: after `wipe()` (what `deinit` does before `sodium_free`), the very
/// memory that held the secret reads as zeros, all of the capacity, not only the bytes in use.
///
/// The memory is looked at through the buffer's own base address, kept from `withUnsafeBytes`, while the
/// buffer is still alive (`withExtendedLifetime`). Nothing here reads memory after `deinit`: that would be a
/// use after free (libsodium unmaps or guards the pages).
@Suite("SecretBytes: wiping the memory itself")
struct SecretBytesWipeTests {
    static let marker = Array("wipe-marker-7f3a9c1e-SECRET-0123456789".utf8)

    /// The raw memory at `base` (`count` bytes), copied out.
    static func memory(_ base: UnsafeRawPointer, _ count: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    @Test(arguments: [64, 1000, 4096, SecretBytes.maximumCount])
    func wipeZeroesTheMemoryThatHeldTheSecret(capacity: Int) throws {
        let s = SecretBytes(capacity: max(capacity, Self.marker.count))
        // Fill the whole capacity: the marker, then more bytes that are not in use.
        s.withUnsafeMutableBytes { raw, used in
            for i in raw.indices { raw[i] = Self.marker[i % Self.marker.count] }
            used = min(Self.marker.count, raw.count)
        }
        try withExtendedLifetime(s) {
            let base = try #require(s.withUnsafeBytes { $0.baseAddress })
            let whole = s.capacity
            let before = Self.memory(base, whole)
            #expect(before.starts(with: Self.marker.prefix(whole)), "the marker is really in that memory")

            s.wipe()

            let after = Self.memory(base, whole)
            #expect(after.allSatisfy { $0 == 0 }, "\(after.filter { $0 != 0 }.count) of \(whole) bytes are not zero")
            #expect(s.count == 0)
            #expect(s.withUnsafeBytes { $0.baseAddress } == base, "the same memory is still the buffer's")
        }
    }

    @Test func wipeZeroesACopiedSecret() throws {
        let s = Self.marker.withUnsafeBytes { SecretBytes(copying: $0) }
        try withExtendedLifetime(s) {
            let base = try #require(s.withUnsafeBytes { $0.baseAddress })
            #expect(Self.memory(base, Self.marker.count) == Self.marker)
            s.wipe()
            #expect(Self.memory(base, s.capacity).allSatisfy { $0 == 0 })
        }
    }

    @Test func wipeZeroesRandomBytes() throws {
        let s = SecretBytes.random(count: 64)
        try withExtendedLifetime(s) {
            let base = try #require(s.withUnsafeBytes { $0.baseAddress })
            #expect(!Self.memory(base, 64).allSatisfy { $0 == 0 }, "random bytes are there first")
            s.wipe()
            #expect(Self.memory(base, 64).allSatisfy { $0 == 0 })
        }
    }

    /// Shortening wipes the dropped tail in place; the kept head is untouched until `wipe()`.
    @Test func truncateZeroesTheDroppedTailInPlace() throws {
        let s = Self.marker.withUnsafeBytes { SecretBytes(copying: $0) }
        try withExtendedLifetime(s) {
            let base = try #require(s.withUnsafeBytes { $0.baseAddress })
            s.truncate(to: 5)
            let memory = Self.memory(base, Self.marker.count)
            #expect(Array(memory[..<5]) == Array(Self.marker[..<5]))
            #expect(memory[5...].allSatisfy { $0 == 0 }, "the dropped bytes are zero where they were")
            s.wipe()
            #expect(Self.memory(base, Self.marker.count).allSatisfy { $0 == 0 })
        }
    }

    /// Appending after a wipe reuses the zeroed memory: nothing of the old secret reappears past the new bytes.
    @Test func bytesAppendedAfterAWipeLeaveTheRestZero() throws {
        let s = SecretBytes(capacity: 64)
        try withExtendedLifetime(s) {
            _ = Self.marker.withUnsafeBytes { s.append($0) }
            let base = try #require(s.withUnsafeBytes { $0.baseAddress })
            s.wipe()
            _ = ([1, 2, 3] as [UInt8]).withUnsafeBytes { s.append($0) }
            let memory = Self.memory(base, 64)
            #expect(Array(memory[..<3]) == [1, 2, 3])
            #expect(memory[3...].allSatisfy { $0 == 0 })
        }
    }
}
