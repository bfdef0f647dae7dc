import Testing
@testable import SecretService
@testable import Slots

/// The loaders of libsystemd and libgcrypt (dlopen by soname, then dlsym of every function in the table):
/// a library that is not there, and one that is there but is not the library asked for, are failures with
/// the loader's words, never a crash or a half-filled table.
@Suite("dlopen loaders of sd-bus and libgcrypt")
struct LibraryLoaderTests {
    static let absent = "libvaultctl-absent-for-a-test.so.0"

    @Test func sdBusLoadsFromTheSystemAndAMissingLibraryIsNamed() {
        if case .failure(let e) = loadSDBus(soname: "libsystemd.so.0") { Issue.record("libsystemd did not load: \(e)") }
        guard case .failure(.libraryUnavailable(let why)) = loadSDBus(soname: Self.absent) else {
            Issue.record("a missing library loaded")
            return
        }
        #expect(why.contains(Self.absent), "\(why)")
        // A library that is there but has none of sd-bus's functions: the lookup fails, naming the function.
        guard case .failure(.libraryUnavailable(let other)) = loadSDBus(soname: "libsodium.so.23") else {
            Issue.record("libsodium passed for libsystemd")
            return
        }
        #expect(other.contains("sd_bus_new"), "\(other)")
    }

    @Test func gcryptLoadsFromTheSystemAndAMissingLibraryIsNamed() {
        if case .failure(let e) = Gcrypt.load(soname: "libgcrypt.so.20") { Issue.record("libgcrypt did not load: \(e.reason)") }
        guard case .failure(let e) = Gcrypt.load(soname: Self.absent) else {
            Issue.record("a missing library loaded")
            return
        }
        #expect(e.reason.contains(Self.absent), "\(e.reason)")
        guard case .failure(let other) = Gcrypt.load(soname: "libsodium.so.23") else {
            Issue.record("libsodium passed for libgcrypt")
            return
        }
        #expect(other.reason.contains("gcry_check_version"), "\(other.reason)")
    }
}
