#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The device slot's sealed files: changed, renamed, loosened or carried to another machine, they do not open.
@Suite("Sealed device files", .tags(.needsRoot, .needsServices))
struct DeviceFileTests {
    /// Where in a sealed file to flip a byte. Layout: "VCTLSEAL" | version | machine tag (16) |
    /// name length (1) | name | nonce (24) | ciphertext + tag (16).
    enum Region: String, CaseIterable, Sendable {
        case magic, version, nonce, ciphertext, authenticationTag

        func offset(nameLength n: Int, fileCount: Int) -> Int {
            switch self {
            case .magic: return 0
            case .version: return 8
            case .nonce: return 8 + 1 + 16 + 1 + n + 5
            case .ciphertext: return 8 + 1 + 16 + 1 + n + 24 + 2
            case .authenticationTag: return fileCount - 1
            }
        }
    }

    /// Stores a device slot and returns its file's bytes.
    private func storeDevice(_ sb: Sandbox, _ name: String, _ secret: [UInt8]) throws -> [UInt8] {
        try sb.store(name, secret, mode: "device")
        return try #require(FileBytes.read(sb.slotFile(name)))
    }

    @Test(arguments: Region.allCases)
    func readOfTamperedFileIs65(region: Region) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("tamper")
        let secret = TestData.textSecret(name)
        var bytes = try storeDevice(sb, name, secret)
        let offset = region.offset(nameLength: name.utf8.count, fileCount: bytes.count)
        bytes[offset] ^= 0x01
        try #require(FileBytes.write(sb.slotFile(name), bytes))

        let r = try sb.read(name)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains(sb.slotFile(name)), "the message names the file: \(r.stderr)")
        #expect(r.status == 65, "\(region): \(r)")
        #expect(!r.stderr.contains("Secret Service"), "a damaged device file is not a Secret Service problem: \(r.stderr)")
        #expect(!r.stderr.contains(String(decoding: secret, as: UTF8.self)))
    }

    /// The header's machine tag and slot name are checked before the key is used, to say why a file does
    /// not open; a changed byte there is still 65, never "empty".
    @Test(arguments: [9, 26])
    func readOfFileWithChangedHeaderIdentityIs65(offset: Int) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("tamper-id")
        var bytes = try storeDevice(sb, name, TestData.textSecret(name))
        bytes[offset] ^= 0x01
        try #require(FileBytes.write(sb.slotFile(name), bytes))

        let r = try sb.read(name)
        #expect(r.stdout.isEmpty)
        #expect(r.status == 65, "byte \(offset): \(r)")
    }

    @Test func readOfRenamedSlotFileIs65() throws {
        let sb = try Sandbox()
        let original = sb.uniqueSlot("orig")
        let other = sb.uniqueSlot("renamed")
        _ = try storeDevice(sb, original, TestData.textSecret(original))
        try #require(rename(sb.slotFile(original), sb.slotFile(other)) == 0)

        let r = try sb.read(other)
        #expect(r.stdout.isEmpty)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("does not belong to this slot"), "\(r.stderr)")
    }

    @Test func readOfWorldReadableSlotFileIs78() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("loose")
        _ = try storeDevice(sb, name, TestData.textSecret(name))
        try #require(chmod(sb.slotFile(name), 0o644) == 0)

        let r = try sb.read(name)
        r.expectFailure(78, saying: "chmod 600")
    }

    @Test func readOfSlotInWorldReadableFolderIs78() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("loose-dir")
        _ = try storeDevice(sb, name, TestData.textSecret(name))
        try #require(chmod("\(sb.stateFolder)/slots", 0o755) == 0)

        let r = try sb.read(name)
        r.expectFailure(78)
    }

    /// Another machine: the read runs in a mount namespace where `/etc/machine-id` is a different id.
    @Test func readOnAnotherMachineIs65() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("elsewhere")
        let secret = TestData.textSecret(name)
        _ = try storeDevice(sb, name, secret)

        func readWithMachineID(_ id: String) throws -> ProcessResult {
            let file = "\(sb.root)/machine-id-\(UInt32.random(in: 0...UInt32.max))"
            try #require(FileText.write(file, id, mode: 0o644))
            return try sb.vaultctl(["read", name], prefix: [
                Paths.tool("unshare"), "-m", Paths.tool("sh"), "-c",
                "mount --bind '\(file)' /etc/machine-id && exec \"$0\" \"$@\"",
            ])
        }

        // The namespace trick itself works: the same id still opens the file.
        let realID = try #require(FileText.read("/etc/machine-id"))
        let same = try readWithMachineID(realID)
        try #require(same.status == 0, "the unshare/bind-mount wrapper failed on this machine's own id: \(same)")
        #expect(same.stdout == secret)

        let r = try readWithMachineID("0123456789abcdef0123456789abcdef\n")
        #expect(r.stdout.isEmpty)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("another machine"), "\(r.stderr)")
    }
}
