#if canImport(Glibc)
import TestSupport
import Glibc
#endif
import Testing
@testable import Vault
@testable import VaultRules

/// The receiver's targets document: strict, private, written atomically.
@Suite struct TargetListTests {
    /// Runs `body` on a list in a folder of its own, kept until `body` returns.
    static func withList(_ body: (TargetList) throws -> Void) rethrows {
        let folder = TemporaryFolder()
        try withExtendedLifetime(folder) { try body(TargetList(configFolder: folder.appending("vaultctl"))) }
    }

    static func write(_ list: TargetList, _ text: String) {
        mkdir(list.folder, 0o700)
        let fd = open(list.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = text.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }

    @Test func addListRemoveRoundTripIn0600Within0700() throws {
        try Self.withList { list in
            let target = Target(name: "data-volume", check: "test ! -e /dev/mapper/data", command: ["cryptsetup", "open", "/dev/sdb1", "data", "--key-file=-"])
            try list.add(target)
            try list.add(Target(name: "backup", check: nil, command: ["/bin/true"]))
            #expect(try list.all() == [Target(name: "backup", check: nil, command: ["/bin/true"]), target])
            var st = stat()
            #expect(stat(list.path, &st) == 0 && st.st_mode & 0o777 == 0o600)
            #expect(stat(list.folder, &st) == 0 && st.st_mode & 0o777 == 0o700)
            #expect(try list.remove("backup"))
            #expect(try !list.remove("backup"))
            #expect(try list.named("data-volume") == target)
        }
    }

    @Test func anExistingNameIsRefusedAndNothingChanges() throws {
        try Self.withList { list in
            try list.add(Target(name: "t", check: "a", command: ["/bin/true"]))
            #expect(throws: VaultError.self) { try list.add(Target(name: "t", check: nil, command: ["/bin/false"])) }
            #expect(try list.named("t")?.check == "a")
        }
    }

    @Test(arguments: [
        (#"{"version": 1, "targets": {"t": {"command": ["/bin/true"], "chek": "x"}}}"#, "unknown key \"targets.t.chek\""),
        (#"{"version": 1, "targets": {}, "extra": 1}"#, "unknown key \"extra\""),
        (#"{"version": 2, "targets": {}}"#, "version 2 is not one this vaultctl reads"),
        (#"{"targets": {}}"#, "\"version\" is missing"),
        (#"{"version": 1, "targets": {"t": {"command": []}}}"#, "\"targets.t.command\" must be a non-empty array"),
        (#"{"version": 1, "targets": {"t": {"command": "/bin/true"}}}"#, "\"targets.t.command\" must be a non-empty array"),
        (#"{"version": 1, "targets": {"t": {"check": 1, "command": ["/bin/true"]}}}"#, "\"targets.t.check\" must be a non-empty string"),
        (#"{"version": 1, "targets": {"-x": {"command": ["/bin/true"]}}}"#, "not a valid target name"),
        (#"{"version": 1, "targets": {"t": {"command": ["/bin/true"]}, "t": {"command": ["/bin/false"]}}}"#, "appears twice"),
    ])
    func anyProblemRejectsTheWholeDocumentNamingIt(_ text: String, _ named: String) throws {
        try Self.withList { list in
            Self.write(list, text)
            do throws(VaultError) {
                _ = try list.all()
                Issue.record("accepted \(text)")
            } catch {
                guard case .configuration(let path, let detail) = error else { Issue.record("\(error)"); return }
                #expect(path == list.path)
                #expect(detail.contains(named), "\(detail)")
            }
        }
    }

    @Test func aFileOthersCanReadIsRefused() throws {
        try Self.withList { list in
            try list.add(Target(name: "t", check: nil, command: ["/bin/true"]))
            chmod(list.path, 0o644)
            #expect(throws: VaultError.self) { try list.all() }
            chmod(list.path, 0o600)
            chmod(list.folder, 0o755)
            #expect(throws: VaultError.self) { try list.all() }
        }
    }

    @Test(arguments: ["data-volume", "a", "A.b_c-9", String(repeating: "x", count: 64)])
    func validNames(_ name: String) { #expect(Target.isValidName(name)) }

    @Test(arguments: ["", "-x", ".x", "a b", "a/b", "a'b", "a\"b", "é", String(repeating: "x", count: 65)])
    func invalidNames(_ name: String) { #expect(!Target.isValidName(name)) }
}
