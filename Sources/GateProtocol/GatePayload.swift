#if canImport(Glibc)
import Glibc
#endif
import Slots
import VaultRules

/// What a frame carries: a zeroizing buffer for the words that may carry a secret (`GateWord.carriesSecret`:
/// a value, a password, a read's result), plain bytes for the ones that only ever carry the protocol's own
/// words (a request, a prompt's text, a refusal). Each `sodium_malloc` costs tens of microseconds (guard
/// pages, `mlock`), and a protected read is a handful of frames: only what may be a secret pays for it.
///
/// Not `Sendable`, as `SecretBytes` is not: a frame stays with the one thread that reads or writes it.
public enum GatePayload {
    case secret(SecretBytes)
    case plain([UInt8])

    public var count: Int {
        switch self {
        case .secret(let s): return s.count
        case .plain(let p): return p.count
        }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .secret(let s): return s.withUnsafeBytes(body)
        case .plain(let p): return p.withUnsafeBytes(body)
        }
    }
}
