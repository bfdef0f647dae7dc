import CGcrypt
import Slots

/// libgcrypt, the one place vaultctl calls it: the Diffie-Hellman arithmetic and AES-128-CBC of the Secret
/// Service session algorithm, as libsecret's `egg/egg-dh.c` and `libsecret/secret-session.c` use it.
///
/// The library is initialised once, lazily (only a command that moves a value across the bus pays for it):
/// version check, a secure-memory pool for the secret exponent and the cipher's key schedule, then
/// "initialization finished". Secret numbers live in libgcrypt's secure memory (`gcry_mpi_snew`) and are
/// wiped and freed with the MPI; their bytes leave libgcrypt only into a `SecretBytes`.
enum Gcrypt {
    /// The oldest libgcrypt accepted: 1.8, past the side-channel fixes to `gcry_mpi_powm` with secret
    /// exponents (CVE-2015-0837 in 1.6.3, CVE-2017-7526 in 1.7.8). Debian 12 has 1.10.
    static let requiredVersion = "1.8.0"

    /// libgcrypt's functions, loaded and initialised once per process (CGcrypt/shim.h says why it is
    /// loaded, not linked), or why that failed.
    fileprivate static let loaded = load(soname: "libgcrypt.so.20")

    /// Loads the library named `soname` and initialises it (once per process: see `loaded`).
    static func load(soname: String) -> Result<vaultctl_gcry, Unavailable> {
        let table = UnsafeMutablePointer<vaultctl_gcry>.allocate(capacity: 1)
        defer { table.deallocate() }
        var error: UnsafePointer<CChar>?
        guard vaultctl_gcry_load(table, soname, requiredVersion, &error) != nil else {
            return .failure(Unavailable(reason: error.map { String(cString: $0) } ?? "\(soname) could not be loaded"))
        }
        return .success(table.pointee)
    }

    /// Why libgcrypt is not there to use: the loader's words.
    struct Unavailable: Error, Sendable {
        let reason: String
    }

    /// Loads and initialises libgcrypt; false when it cannot be loaded or the installed library is too old.
    static func initialize() -> Bool { unavailableReason == nil }

    /// Why libgcrypt cannot be used (it could not be loaded, or it is older than `requiredVersion`); nil
    /// when it is ready.
    static var unavailableReason: String? {
        if case .failure(let e) = loaded { return e.reason }
        return nil
    }

    // MARK: - Numbers

    /// A big number owned by libgcrypt, released (and, when secure, wiped) on `deinit`.
    /// Not `Sendable`: a number belongs to the one exchange that made it.
    final class Number {
        fileprivate let mpi: gcry_mpi_t

        fileprivate init(_ mpi: gcry_mpi_t) { self.mpi = mpi }

        deinit { gcry.gcry_mpi_release(mpi) }

        /// A public number from big-endian bytes (at least one; leading zeros allowed). The corresponding C function is
        /// `gcry_mpi_scan` with `GCRYMPI_FMT_USG`.
        static func unsigned(bigEndian bytes: [UInt8]) -> Number? {
            guard initialize(), !bytes.isEmpty else { return nil }
            var out: gcry_mpi_t?
            let rc = bytes.withUnsafeBytes { gcry.gcry_mpi_scan(&out, GCRYMPI_FMT_USG, $0.baseAddress, $0.count, nil) }
            guard rc == 0, let out else { return nil }
            return Number(out)
        }

        /// A public number from hexadecimal digits (a constant such as a group's prime).
        static func hex(_ digits: String) -> Number {
            precondition(initialize(), "libgcrypt \(requiredVersion) or newer is required")
            var out: gcry_mpi_t?
            let rc = gcry.gcry_mpi_scan(&out, GCRYMPI_FMT_HEX, digits, 0, nil)
            precondition(rc == 0 && out != nil, "not a hexadecimal number")
            return Number(out!)
        }

        /// A small public number.
        static func small(_ value: UInt) -> Number {
            precondition(initialize(), "libgcrypt \(requiredVersion) or newer is required")
            return Number(gcry.gcry_mpi_set_ui(nil, value)!)
        }

        /// A secret number of `bits` random bits, in secure memory, never zero. The corresponding C
        /// function is `gcry_mpi_randomize` with `GCRY_STRONG_RANDOM`, as libsecret's `egg_dh_gen_pair`.
        static func secretRandom(bits: Int) -> Number {
            precondition(initialize(), "libgcrypt \(requiredVersion) or newer is required")
            let x = gcry.gcry_mpi_snew(UInt32(bits))!
            repeat {
                gcry.gcry_mpi_randomize(x, UInt32(bits), GCRY_STRONG_RANDOM)
            } while gcry.gcry_mpi_cmp_ui(x, 0) == 0  // probability 2⁻ᵇⁱᵗˢ; only "zero or not" depends on the secret
            return Number(x)
        }

        /// A secret number from big-endian bytes (known-answer tests), copied through secure memory so the
        /// number itself is secure.
        static func secret(bigEndian bytes: SecretBytes) -> Number? {
            guard initialize(), bytes.count > 0, let buffer = gcry.gcry_malloc_secure(bytes.count) else { return nil }
            defer { gcry.gcry_free(buffer) }  // secure memory is wiped when freed
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            var out: gcry_mpi_t?
            guard gcry.gcry_mpi_scan(&out, GCRYMPI_FMT_USG, buffer, bytes.count, nil) == 0, let out else { return nil }
            return Number(out)
        }

        /// `self^exponent mod modulus`, the result in secure memory. The modulus is copied into secure memory
        /// first, so libgcrypt keeps its scratch for the secret exponent's powers there too. The corresponding C
        /// function is `gcry_mpi_powm`.
        func power(_ exponent: Number, modulo modulus: Number) -> Number {
            let bits = UInt32(gcry.gcry_mpi_get_nbits(modulus.mpi))
            let m = gcry.gcry_mpi_snew(bits)!
            defer { gcry.gcry_mpi_release(m) }
            _ = gcry.gcry_mpi_set(m, modulus.mpi)
            let w = gcry.gcry_mpi_snew(bits)!
            gcry.gcry_mpi_powm(w, mpi, exponent.mpi, m)
            return Number(w)
        }

        /// `self − value`.
        func minus(_ value: UInt) -> Number {
            let w = gcry.gcry_mpi_new(0)!
            gcry.gcry_mpi_sub_ui(w, mpi, value)
            return Number(w)
        }

        /// Compares two numbers: negative, zero or positive.
        func compare(_ other: Number) -> Int32 { gcry.gcry_mpi_cmp(mpi, other.mpi) }

        /// Bytes needed for the number, big-endian without leading zeros.
        var byteCount: Int { (Int(gcry.gcry_mpi_get_nbits(mpi)) + 7) / 8 }

        /// The number as `count` big-endian bytes, left-padded with zeros, written into `out` (which must
        /// hold `count` bytes). False when it does not fit. The corresponding C function is `gcry_mpi_print`.
        func write(bigEndian out: UnsafeMutableRawBufferPointer, count: Int) -> Bool {
            let n = byteCount
            guard n <= count, out.count >= count else { return false }
            out.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count - n)
            var written = 0
            guard n == 0 || gcry.gcry_mpi_print(GCRYMPI_FMT_USG, out.baseAddress! + (count - n), n, &written, mpi) == 0,
                  written == n else { return false }
            return true
        }

        /// The number as `count` big-endian bytes (for public numbers).
        func publicBytes(count: Int) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: count)
            let ok = out.withUnsafeMutableBytes { write(bigEndian: $0, count: count) }
            return ok ? out : nil
        }
    }

    // MARK: - AES-128-CBC

    /// An AES-128-CBC key in libgcrypt's secure memory (`GCRY_CIPHER_SECURE`), closed on `deinit`.
    /// Not `Sendable`: a cipher handle is used by one task at a time.
    final class AES128CBC {
        static let keyBytes = 16
        static let blockBytes = 16

        private let handle: gcry_cipher_hd_t

        /// nil when libgcrypt refuses the key (wrong length) or cannot open the cipher.
        init?(key: SecretBytes) {
            guard initialize(), key.count == Self.keyBytes else { return nil }
            var h: gcry_cipher_hd_t?
            // GCRY_CIPHER_AES128 is a macro for GCRY_CIPHER_AES.
            guard gcry.gcry_cipher_open(&h, Int32(GCRY_CIPHER_AES.rawValue), Int32(GCRY_CIPHER_MODE_CBC.rawValue),
                                   UInt32(GCRY_CIPHER_SECURE.rawValue)) == 0, let h else { return nil }
            guard key.withUnsafeBytes({ gcry.gcry_cipher_setkey(h, $0.baseAddress, $0.count) }) == 0 else {
                gcry.gcry_cipher_close(h)
                return nil
            }
            handle = h
        }

        deinit { gcry.gcry_cipher_close(handle) }

        /// Encrypts or decrypts `buffer` in place (its length a multiple of 16) from `iv` (16 bytes).
        /// The corresponding C functions are `gcry_cipher_setiv` and `gcry_cipher_encrypt`/`decrypt`.
        func run(encrypting: Bool, _ buffer: UnsafeMutableRawBufferPointer, iv: [UInt8]) -> Bool {
            guard iv.count == Self.blockBytes, buffer.count % Self.blockBytes == 0 else { return false }
            guard iv.withUnsafeBytes({ gcry.gcry_cipher_setiv(handle, $0.baseAddress, $0.count) }) == 0 else { return false }
            guard buffer.count > 0 else { return true }
            let rc = encrypting
                ? gcry.gcry_cipher_encrypt(handle, buffer.baseAddress, buffer.count, nil, 0)
                : gcry.gcry_cipher_decrypt(handle, buffer.baseAddress, buffer.count, nil, 0)
            return rc == 0
        }
    }
}

/// The loaded functions. Every path here checks `Gcrypt.initialize()` before it makes the first number or
/// cipher, so only a loaded library is reached.
private var gcry: vaultctl_gcry { try! Gcrypt.loaded.get() }

/// A table of function addresses, written once by the loader and only read after: safe to share.
extension vaultctl_gcry: @unchecked @retroactive Sendable {}
