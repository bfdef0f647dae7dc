import CSodium

/// The only home of plaintext: a buffer from `sodium_malloc`, wiped with `sodium_memzero` when released.
///
/// Secrets never live in `String`, `Data` or `[UInt8]`. The buffer is guarded by libsodium (guard pages,
/// `mlock`), its whole capacity is wiped on `deinit`, and its description never shows its contents.
/// Bytes are reached only through `withUnsafeBytes` / `withUnsafeMutableBytes`.
///
/// Not `Sendable` by design: a secret stays with the one task that holds it.
public final class SecretBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Most bytes a secret may have.
    public static let maximumCount = 64 * 1024

    private let base: UnsafeMutableRawPointer
    /// Bytes allocated; all of them are wiped on release.
    public let capacity: Int
    /// Bytes in use.
    public private(set) var count: Int

    /// Allocates a zeroed buffer of `capacity` bytes with `count` 0.
    public init(capacity: Int) {
        Sodium.initialize()
        let size = max(capacity, 1)
        guard let p = sodium_malloc(size) else {
            fatalError("sodium_malloc failed: out of memory")
        }
        sodium_memzero(p, size)
        base = p
        self.capacity = size
        count = 0
    }

    /// Copies `bytes` into a new buffer (used for constants and tests; the caller owns the source).
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(capacity: bytes.count)
        if let src = bytes.baseAddress, bytes.count > 0 {
            base.copyMemory(from: src, byteCount: bytes.count)
        }
        count = bytes.count
    }

    /// Random bytes from libsodium. The corresponding C function is `randombytes_buf`.
    public static func random(count: Int) -> SecretBytes {
        let s = SecretBytes(capacity: count)
        randombytes_buf(s.base, count)
        s.count = count
        return s
    }

    deinit {
        sodium_memzero(base, capacity)
        sodium_free(base)
    }

    public var isEmpty: Bool { count == 0 }

    /// Reads the bytes in use.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Writes into the whole capacity; `body` returns how many bytes are now in use.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer, inout Int) throws(E) -> R) throws(E) -> R {
        var n = count
        defer {
            count = min(max(n, 0), capacity)
        }
        return try body(UnsafeMutableRawBufferPointer(start: base, count: capacity), &n)
    }

    /// Appends bytes if they fit; returns false (and appends nothing) when they do not.
    @discardableResult
    public func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= capacity - count else { return false }
        if let src = bytes.baseAddress, bytes.count > 0 {
            (base + count).copyMemory(from: src, byteCount: bytes.count)
        }
        count += bytes.count
        return true
    }

    /// Drops bytes from the end, wiping them.
    public func truncate(to newCount: Int) {
        let keep = max(newCount, 0)
        guard keep < count else { return }
        sodium_memzero(base + keep, count - keep)
        count = keep
    }

    /// Constant-time comparison of contents (lengths are compared first; lengths are not secret here).
    /// The corresponding C function is `sodium_memcmp`.
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    /// Wipes the contents and sets `count` to 0.
    public func wipe() {
        sodium_memzero(base, capacity)
        count = 0
    }

    public var description: String { "SecretBytes(redacted)" }
    public var debugDescription: String { "SecretBytes(redacted)" }
}
