#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import GateService

/// The two small texts that bind a folder of the protected store to its account, read strictly, and the
/// home's file read without following any link (`GateAccount`, `HomeFile`); the whole binding runs against a
/// real gate in `GateAccountTests`.
@Suite struct GateAccountRecordTests {
    let id = String(repeating: "0123456789abcdef", count: 4)

    @Test func aRecordIsReadOnlyInItsOwnExactForm() {
        #expect(GateAccount.parseRecord(Array("vaultctl-gate account 1\nuser erin\nid \(id)\n".utf8)) == .init(user: "erin", id: id))
        for bad in ["vaultctl-gate account 2\nuser erin\nid \(id)\n",   // another version
                    "vaultctl-gate account 1\nuser erin\nid \(id)",     // no final newline
                    "vaultctl-gate account 1\nuser \nid \(id)\n",       // no name
                    "vaultctl-gate account 1\nuser erin\nid \(id.uppercased())\n",
                    "vaultctl-gate account 1\nuser erin\nid \(id.dropLast())\n",
                    "vaultctl-gate account 1\nuser erin\nid \(id)\nextra 1\n",
                    "vaultctl account id 1 \(id)\n"] {                  // the home's form
            #expect(GateAccount.parseRecord(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(GateAccount.parseRecord([0xff, 0xfe]) == nil)
    }

    @Test func aHomeIdIsReadOnlyInItsOwnExactForm() {
        #expect(GateAccount.parseHome(Array("vaultctl account id 1 \(id)\n".utf8)) == id)
        for bad in ["vaultctl account id 1 \(id)", "vaultctl account id 2 \(id)\n", "vaultctl account id 1 \(id)x\n",
                    "vaultctl-gate account 1\nuser erin\nid \(id)\n", " vaultctl account id 1 \(id)\n"] {
            #expect(GateAccount.parseHome(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func idsCompareWhole() {
        #expect(GateAccount.sameID(id, id))
        #expect(!GateAccount.sameID(id, String(id.dropLast()) + "0"))
        #expect(!GateAccount.sameID(id, String(id.dropLast())))
        #expect(GateAccount.isID(GateAccount.newID()) && GateAccount.newID() != GateAccount.newID())
    }

    /// No link on the way is followed, at any depth: the gate holds the store's group, and a link could lead
    /// it to a file only that group may read.
    @Test func theHomeFileIsReadWithoutFollowingAnyLink() throws {
        let home = try Fixtures.makeFolder("account-home")
        let elsewhere = try Fixtures.makeFolder("account-elsewhere")
        try FileManager.default.createDirectory(atPath: "\(elsewhere)/vaultctl", withIntermediateDirectories: true)
        try "vaultctl account id 1 \(id)\n".write(toFile: "\(elsewhere)/vaultctl/account", atomically: true, encoding: .utf8)
        let path = GateAccount.homePath
        let uid = getuid()

        try FileManager.default.createDirectory(atPath: "\(home)/.local/share/vaultctl", withIntermediateDirectories: true)
        try "vaultctl account id 1 \(id)\n".write(toFile: "\(home)/.local/share/vaultctl/account", atomically: true, encoding: .utf8)
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .bytes(Array("vaultctl account id 1 \(id)\n".utf8)))
        #expect(HomeFile.read(home: home, components: path, uid: uid + 1) == .other("it is owned by uid \(uid)"), "another user's file is not read")

        // The file a link, then each folder on the way a link.
        try FileManager.default.removeItem(atPath: "\(home)/.local/share/vaultctl/account")
        symlink("\(elsewhere)/vaultctl/account", "\(home)/.local/share/vaultctl/account")
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .other("'account' is a symbolic link"))
        try FileManager.default.removeItem(atPath: "\(home)/.local/share/vaultctl")
        symlink("\(elsewhere)/vaultctl", "\(home)/.local/share/vaultctl")
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .other("'vaultctl' is not a folder (a link is not followed)"))
        try FileManager.default.removeItem(atPath: "\(home)/.local")
        try FileManager.default.createDirectory(atPath: "\(elsewhere)/share", withIntermediateDirectories: true)
        symlink("\(elsewhere)/vaultctl", "\(elsewhere)/share/vaultctl")
        symlink(elsewhere, "\(home)/.local")
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .other("'.local' is not a folder (a link is not followed)"))
        // A folder where the file should be, and a file too large, are not read either.
        try FileManager.default.removeItem(atPath: "\(home)/.local")
        try FileManager.default.createDirectory(atPath: "\(home)/.local/share/vaultctl/account", withIntermediateDirectories: true)
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .other("it is not a regular file"))
        try FileManager.default.removeItem(atPath: "\(home)/.local/share/vaultctl/account")
        try String(repeating: "x", count: 5000).write(toFile: "\(home)/.local/share/vaultctl/account", atomically: true, encoding: .utf8)
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .other("it is larger than 4 KiB"))
        // Nothing there, and a home that cannot be opened.
        try FileManager.default.removeItem(atPath: "\(home)/.local")
        #expect(HomeFile.read(home: home, components: path, uid: uid) == .missing)
        if case .unreadable = HomeFile.read(home: "\(home)/not-there", components: path, uid: uid) {} else { Issue.record("a home that cannot be opened is unreadable") }
    }
}
