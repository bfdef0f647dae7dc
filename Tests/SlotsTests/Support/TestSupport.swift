import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Slots
import TestSupport

// Helpers shared by the Slots tests: private temp folders, raw file access that bypasses vaultctl's own checks,
// and ways to make and inspect secrets. Plaintext in `[UInt8]` is fine here: these are test values.

/// The text every test secret carries, so a leak into a message or description is easy to spot.
let secretMarker = "hunter2-MARKER"

/// This test machine, with the fixed identity the known-answer vector uses.
let hereMachine = MachineIdentity(id: Array("0123456789abcdef0123456789abcdef".utf8))
/// Another machine.
let otherMachine = MachineIdentity(id: Array("fedcba9876543210fedcba9876543210".utf8))

/// Runs `body` with a fresh 0700 folder under /tmp (unique name from `mkdtemp`) and removes it afterwards.
///
/// Swift Testing runs tests in parallel, so every test makes its own.
func withTemporaryFolder<R>(_ body: (String) throws -> R) throws -> R {
    let folder = TemporaryFolder()
    return try withExtendedLifetime(folder) { try body(folder.path) }
}

/// A device-slot state folder inside a temp folder: `<root>/state` (not created until a write makes it).
struct StateFolder {
    let root: String
    var path: String { "\(root)/state" }
    var slotsFolder: String { "\(path)/slots" }
    var deviceKeyPath: String { "\(path)/\(DeviceKey.fileName)" }

    func slot(_ machine: MachineIdentity = hereMachine) -> SealedFileSlot {
        SealedFileSlot(folder: path, machine: machine)
    }

    func slotPath(_ name: String) -> String { "\(slotsFolder)/\(name)" }
}

/// `withTemporaryFolder`, handing over a state folder inside it.
func withStateFolder<R>(_ body: (StateFolder) throws -> R) throws -> R {
    try withTemporaryFolder { root in try body(StateFolder(root: root)) }
}

extension SlotName {
    /// A name the test knows is valid.
    static func test(_ raw: String) -> SlotName {
        guard let name = SlotName(raw) else { preconditionFailure("invalid test slot name \(raw)") }
        return name
    }
}

extension SecretBytes {
    /// A secret holding exactly `bytes`.
    static func test(_ bytes: [UInt8]) -> SecretBytes {
        bytes.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// A secret holding the UTF-8 of `text`.
    static func test(_ text: String) -> SecretBytes { test(Array(text.utf8)) }

    /// The bytes in use, copied out for comparison.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// The `SlotError` `body` throws, or nil when it returns. Any other error is recorded as an issue.
///
/// `body` is untyped because Swift 6 infers `throws(any Error)` for a closure literal with `try` in it.
func failure<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) -> SlotError? {
    do {
        _ = try body()
        return nil
    } catch let error as SlotError {
        return error
    } catch {
        Issue.record("expected a SlotError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Reads a slot that must refuse; returns why, and checks the refusal shows no secret bytes.
func refusal(_ slot: SealedFileSlot, _ name: SlotName, sourceLocation: SourceLocation = #_sourceLocation) -> SlotError? {
    let error = failure({ try slot.read(name) }, sourceLocation: sourceLocation)
    #expect(error != nil, "read of '\(name)' should have been refused", sourceLocation: sourceLocation)
    if let error {
        for text in [String(describing: error), String(reflecting: error), SlotErrorText.describe(error)] {
            #expect(!text.contains(secretMarker), "error text leaks the secret: \(text)", sourceLocation: sourceLocation)
        }
    }
    return error
}

extension SlotError {
    var isTampered: Bool {
        if case .tampered = self { return true }
        return false
    }

    var isUnsafePermissions: Bool {
        if case .unsafePermissions = self { return true }
        return false
    }

    /// The path the error names, if it names one.
    var path: String? {
        switch self {
        case .foreignMachine(let path), .wrongSlot(let path, _), .tampered(let path, _),
             .unsafePermissions(let path, _), .io(let path, _, _), .tpmUnavailable(let path, _), .tpmForeign(let path),
             .tpmHelperMissing(let path), .fleetNotConfigured(let path):
            return path
        case .empty, .badSecretSize, .serviceUnavailable, .locked, .promptUnanswered, .tpmLockout, .tpmCannotSeal,
             .noTPMToSeal, .gateHasNoTPM, .gateUnavailable:
            return nil
        }
    }
}

// MARK: - Raw file access (no vaultctl checks)

/// The whole file, read as root would, ignoring vaultctl's permission rules.
func rawBytes(_ path: String) throws -> [UInt8] {
    let data = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
    return Array(data)
}

/// Replaces a file's contents in place, keeping its inode and mode.
func overwrite(_ path: String, with bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    try #require(fd >= 0, "cannot open \(path): errno \(errno)")
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    try #require(written == bytes.count)
}

/// Creates a file with `bytes` and `mode` (exactly, whatever the umask).
func makeFile(_ path: String, _ bytes: [UInt8] = [], mode: mode_t = 0o600) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    try #require(fd >= 0, "cannot create \(path): errno \(errno)")
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    try #require(written == bytes.count)
    try #require(fchmod(fd, mode) == 0)
}

/// The permission bits of `path`, not following a symlink.
func permissions(_ path: String) throws -> mode_t {
    var st = stat()
    try #require(lstat(path, &st) == 0, "cannot stat \(path): errno \(errno)")
    return st.st_mode & 0o7777
}

/// The inode of `path`.
func inode(_ path: String) throws -> UInt {
    var st = stat()
    try #require(lstat(path, &st) == 0, "cannot stat \(path): errno \(errno)")
    return UInt(st.st_ino)
}

func exists(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0
}

/// Every entry of a folder, hidden ones included, sorted.
func allEntries(_ folder: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
}

func setPermissions(_ path: String, _ mode: mode_t) throws {
    try #require(chmod(path, mode) == 0, "chmod \(path) failed: errno \(errno)")
}

/// Lower-case hex of `bytes`.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// The bytes of a hex string.
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    precondition(digits.count % 2 == 0)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}
