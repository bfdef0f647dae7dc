#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// vaultctl's folders and files, loosened after the fact: a mode that lets the group or others in, another
/// owner (`nobody`, given away as root), or a symlink in its place. Through the binary, for read, store, list
/// and status: a command that needs the file refuses it with one clear line (78) naming the file and why,
/// and nothing is read from it or written through it; a command that does not need the file is unaffected.
///
/// Covered elsewhere and not repeated: a world-readable slot file and a world-readable slots folder
/// (`DeviceFileTests`); every case at the `SealedFileSlot` level (`SealedFileSlotPermissionTests`).
@Suite("permissions through the binary", .tags(.needsServices))
struct PermissionTests {
    enum Loosening: Sendable, CustomTestStringConvertible {
        case mode(mode_t)
        case otherOwner
        case symlink

        var testDescription: String {
            switch self {
            case .mode(let m): return "mode \(String(m, radix: 8))"
            case .otherOwner: return "owned by nobody"
            case .symlink: return "a symlink"
            }
        }

        /// The words the refusal must contain.
        var reason: String {
            switch self {
            case .mode(let m): return "its mode \(String(m, radix: 8)) lets others in"
            case .otherOwner: return "owned by uid \(PermissionTests.nobody.uid)"
            case .symlink: return "symbolic link"
            }
        }

        /// Loosens `path`: changes its mode or owner, or moves it to `path.real` and puts a symlink there.
        func apply(to path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            switch self {
            case .mode(let m):
                try #require(chmod(path, m) == 0, "chmod \(path)", sourceLocation: sourceLocation)
            case .otherOwner:
                try #require(chown(path, PermissionTests.nobody.uid, PermissionTests.nobody.gid) == 0,
                             "chown \(path)", sourceLocation: sourceLocation)
            case .symlink:
                let real = "\(path).real"
                try #require(rename(path, real) == 0 && Glibc.symlink(real, path) == 0, "symlink \(path)",
                             sourceLocation: sourceLocation)
            }
        }

        /// Where the bytes are after `apply` (the symlink's target for `.symlink`).
        func bytesPath(_ path: String) -> String {
            if case .symlink = self { return "\(path).real" }
            return path
        }

        /// These loosenings, plus another owner when running as root (only root can give a file away).
        static func with(_ modes: [mode_t]) -> [Loosening] {
            modes.map(Loosening.mode) + (geteuid() == 0 ? [.otherOwner] : []) + [.symlink]
        }
    }

    static let nobody: (uid: uid_t, gid: gid_t) = {
        guard let pw = getpwnam("nobody") else { return (65534, 65534) }
        return (pw.pointee.pw_uid, pw.pointee.pw_gid)
    }()

    /// The command refused the file: 78 (77 accepted), nothing on stdout, and its last stderr line names the
    /// file and why.
    static func expectRefused(_ r: ProcessResult, _ what: String, path: String, _ how: Loosening,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == 78 || r.status == 77, "\(what): \(r)", sourceLocation: sourceLocation)
        #expect(r.stdout.isEmpty, "\(what): nothing on stdout", sourceLocation: sourceLocation)
        let line = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(line.contains(path) && line.contains(how.reason),
                "\(what): the message names \(path) and says '\(how.reason)': \(r.stderr.debugDescription)",
                sourceLocation: sourceLocation)
    }

    /// A sandbox with slot `name` stored in the device slot, and a first audit line written.
    static func prepared(_ hint: String) throws -> (Sandbox, String, [UInt8]) {
        let sb = try Sandbox()
        let name = sb.uniqueSlot(hint)
        let value = TestData.textSecret(name)
        try sb.storeWithoutPAM(name, value, mode: "device")
        let r = try sb.readReliably(name)
        try #require(r.status == 0 && r.stdout == value, "\(r)")
        return (sb, name, value)
    }

    // MARK: - The config folder: every command reads the policy and the record there

    /// Read and store need the record (and read the policy): they refuse. Status and list may answer
    /// without the config folder, but then they use nothing in it: with the device slot holding A, the
    /// keyring B, a record saying "sync" and a policy allowing supply, a status that answers names the device
    /// slot and says supply is not allowed, as with no config at all.
    @Test(arguments: Loosening.with([0o755, 0o770]))
    func aLooseConfigFolderIsRefusedOrIgnored(_ how: Loosening) throws {
        let (sb, name, _) = try Self.prepared("perm-config")
        let b = Array("keyring value of \(name)".utf8)
        try sb.putKeyringItem(name, b, label: "b")
        try #require(FileText.write("\(sb.configFolder)/modes.json", "{\"slots\":{\"\(name)\":\"sync\"},\"version\":1}", mode: 0o600))
        try sb.writePolicy(#"{"version":1,"slotDefaults":{"allowSupply":true}}"#)
        let following = try sb.statusObject(name)
        try #require(following["mode"] as? String == "sync" && following["allowSupply"] as? Bool == true,
                     "with a private config, status follows the record and the policy: \(following)")
        let deviceFile = try #require(FileBytes.read(sb.slotFile(name)))
        let path = sb.configFolder
        try how.apply(to: path)

        Self.expectRefused(try sb.readReliably(name), "read", path: path, how)
        let other = sb.uniqueSlot("perm-config-new")
        Self.expectRefused(sb.runWithoutPAM(["store", other], stdin: .text("new")), "store of a new slot", path: path, how)
        Self.expectRefused(sb.runWithoutPAM(["store", name], stdin: .text("new")), "store over the slot", path: path, how)
        #expect(!Paths.exists(sb.slotFile(other)), "nothing was stored")
        #expect(FileBytes.read(sb.slotFile(name)) == deviceFile, "the stored value was not replaced")
        #expect(sb.keyringValue(name) == b, "nor the keyring copy removed")

        let status = sb.vaultctlWithoutPAM(["status", name, "--json"])
        if status.status == 0 {
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout)) as? [String: Any])
            #expect(doc["mode"] as? String == "device", "the loose record is not followed: \(status.stdoutText)")
            #expect(doc["allowSupply"] as? Bool == false, "the loose policy is not read: \(status.stdoutText)")
        } else {
            Self.expectRefused(status, "status", path: path, how)
        }
        let list = sb.vaultctlWithoutPAM(["list"])
        if list.status != 0 { Self.expectRefused(list, "list", path: path, how) }
    }

    // MARK: - The record: a hint that is never followed when loose; what would change it refuses

    /// The device slot holds A, the keyring B, and the record says "sync": following the record would read B.
    /// Loosened, the record is refused like every loose file (78): nothing reads through it or rewrites it.
    @Test(arguments: Loosening.with([0o644, 0o660]))
    func aLooseRecordIsNeverFollowedAndNeverUpdated(_ how: Loosening) throws {
        let (sb, name, a) = try Self.prepared("perm-record")
        let b = Array("keyring value of \(name)".utf8)
        try sb.putKeyringItem(name, b, label: "b")
        let recordPath = "\(sb.configFolder)/modes.json"
        try #require(FileText.write(recordPath, "{\"slots\":{\"\(name)\":\"sync\"},\"version\":1}", mode: 0o600))
        let following = try sb.readReliably(name)
        try #require(following.stdout == b, "with a private record, read follows it to the keyring: \(following)")
        let recordBytes = try #require(FileBytes.read(recordPath))
        try how.apply(to: recordPath)

        Self.expectRefused(try sb.readReliably(name), "read", path: recordPath, how)
        Self.expectRefused(sb.vaultctlWithoutPAM(["status", name]), "status", path: recordPath, how)
        #expect(sb.vaultctlWithoutPAM(["list"]).status == 0, "list does not read the record")
        let other = sb.uniqueSlot("perm-record-new")
        Self.expectRefused(sb.runWithoutPAM(["store", other], stdin: .text("new")), "store", path: recordPath, how)
        #expect(!Paths.exists(sb.slotFile(other)), "a store that cannot be recorded writes nothing")
        Self.expectRefused(sb.runWithoutPAM(["delete", name]), "delete", path: recordPath, how)
        #expect(Paths.exists(sb.slotFile(name)) && sb.keyringValue(name) == b, "a refused delete removes nothing")
        #expect(FileBytes.read(how.bytesPath(recordPath)) == recordBytes, "the record was not rewritten")
        if case .symlink = how { #expect(isSymlink(recordPath), "the symlink was not replaced") }
    }

    // MARK: - The audit log

    /// A gated command or a change whose audit line could not be written is refused before it runs (the
    /// README: such a file is refused, 78), and the loose log is never appended to. Commands that are not
    /// audited do not look at it.
    @Test(arguments: Loosening.with([0o644, 0o660]))
    func aLooseAuditLogRefusesGatedCommandsAndIsNeverWrittenTo(_ how: Loosening) throws {
        let (sb, name, _) = try Self.prepared("perm-audit")
        let logPath = "\(sb.stateFolder)/audit.log"
        let logBytes = try #require(FileBytes.read(logPath))
        try how.apply(to: logPath)

        Self.expectRefused(try sb.readReliably(name), "read", path: logPath, how)
        #expect(FileBytes.read(how.bytesPath(logPath)) == logBytes, "nothing was appended to the loose log")
        #expect(sb.vaultctlWithoutPAM(["status", name]).status == 0)
        #expect(sb.vaultctlWithoutPAM(["list"]).status == 0)
        let other = sb.uniqueSlot("perm-audit-new")
        Self.expectRefused(sb.runWithoutPAM(["store", other], stdin: .text("new")), "store (a change)", path: logPath, how)
        #expect(!Paths.exists(sb.slotFile(other)), "a change that cannot be audited writes nothing")
        #expect(FileBytes.read(how.bytesPath(logPath)) == logBytes)
    }

    // MARK: - The state folder

    @Test(arguments: Loosening.with([0o755, 0o770]))
    func aLooseStateFolderIsRefused(_ how: Loosening) throws {
        let (sb, name, _) = try Self.prepared("perm-state")
        let path = sb.stateFolder
        let deviceFile = try #require(FileBytes.read(sb.slotFile(name)))
        try how.apply(to: path)
        let realSlots = "\(how.bytesPath(path))/slots"

        Self.expectRefused(try sb.readReliably(name), "read", path: path, how)
        Self.expectRefused(sb.vaultctlWithoutPAM(["list"]), "list", path: path, how)
        let other = sb.uniqueSlot("perm-state-new")
        Self.expectRefused(sb.runWithoutPAM(["store", other], stdin: .text("new")), "store of a new slot", path: path, how)
        Self.expectRefused(sb.runWithoutPAM(["store", name], stdin: .text("new")), "store over the slot", path: path, how)
        #expect(!Paths.exists("\(realSlots)/\(other)"), "nothing was written through it")
        #expect(FileBytes.read("\(realSlots)/\(name)") == deviceFile)
        #expect(sb.recordedMode(other) == nil, "a refused store is not recorded")
        try Self.expectStatusUnknownOrRefused(sb, name, path: path, how)
    }

    // MARK: - The device key

    @Test(arguments: Loosening.with([0o620, 0o602, 0o660]))
    func aLooseDeviceKeyIsRefusedByEverythingThatNeedsIt(_ how: Loosening) throws {
        let (sb, name, _) = try Self.prepared("perm-key")
        let path = "\(sb.stateFolder)/device.key"
        let keyBytes = try #require(FileBytes.read(path))
        let deviceFile = try #require(FileBytes.read(sb.slotFile(name)))
        try how.apply(to: path)

        Self.expectRefused(try sb.readReliably(name), "read", path: path, how)
        let other = sb.uniqueSlot("perm-key-new")
        Self.expectRefused(sb.runWithoutPAM(["store", other], stdin: .text("new")), "store of a new slot", path: path, how)
        // A store over a value asks PAM first (the key is looked at when the new value is sealed).
        Self.expectRefused(try sb.vaultctlCounted(["store", name], stdin: .text("new")), "store over the slot", path: path, how)
        #expect(!Paths.exists(sb.slotFile(other)), "nothing sealed with a key others can read")
        #expect(FileBytes.read(sb.slotFile(name)) == deviceFile)
        #expect(FileBytes.read(how.bytesPath(path)) == keyBytes, "the key was not replaced")
        // Status may look at the sealed file's header alone, or check the key too and say it cannot look.
        let doc = try sb.status(name)
        if doc.state != "on-this-device" {
            #expect(doc.state == "unknown" && doc.message.contains(path) && doc.message.contains(how.reason), "\(doc)")
        }
        let list = sb.vaultctlWithoutPAM(["list"])
        if list.status == 0 {
            #expect(list.stdoutText.contains("\(name)\tdevice\n"), "\(list)")
        } else {
            Self.expectRefused(list, "list", path: path, how)
        }
    }

    // MARK: - A slot file (world-readable is in DeviceFileTests)

    @Test(arguments: Loosening.with([0o640, 0o620]))
    func aLooseSlotFileIsNeverRead(_ how: Loosening) throws {
        let (sb, name, _) = try Self.prepared("perm-slot")
        let path = sb.slotFile(name)
        let deviceFile = try #require(FileBytes.read(path))
        try how.apply(to: path)

        Self.expectRefused(try sb.readReliably(name), "read", path: path, how)
        try Self.expectStatusUnknownOrRefused(sb, name, path: path, how)
        #expect(try sb.listedWithoutPAM()[name] == ["device"], "list shows the name; it opens no file")
        // A store replaces the file itself (a symlink is replaced, never written through), after PAM: a file
        // that cannot be looked at may hold a value.
        let new = Array("replacement for \(name)".utf8)
        let over = try sb.vaultctlCounted(["store", name], stdin: .bytes(new))
        #expect(over.status == 0, "\(over)")
        if case .symlink = how { #expect(FileBytes.read("\(path).real") == deviceFile, "the symlink's target is untouched") }
        #expect(!isSymlink(path))
        let r = try sb.readReliably(name)
        #expect(r.status == 0 && r.stdout == new, "\(r)")
    }
}

extension PermissionTests {
    /// `status NAME`, which never prompts, answers when it can: "unknown", naming `path` and why; never
    /// "none" or a certainty. Or it is refused as every other command.
    static func expectStatusUnknownOrRefused(_ sb: Sandbox, _ name: String, path: String, _ how: Loosening,
                                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let s = sb.vaultctlWithoutPAM(["status", name, "--json"])
        if s.status == 0 {
            let doc = try StatusDocument.parse(s.stdout)
            #expect(doc.state == "unknown", "\(doc)", sourceLocation: sourceLocation)
            #expect(doc.message.contains(path) && doc.message.contains(how.reason), "\(doc)", sourceLocation: sourceLocation)
        } else {
            expectRefused(s, "status", path: path, how)
        }
    }
}

private func isSymlink(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
}
