import TestSupport
import Foundation
import Testing
import Slots
@testable import Vault
@testable import VaultRules

/// The "copied" mark on a real folder: bound to one code, never holding it.
@Suite struct CopiedMarkTests {
    let folder = TemporaryFolder()
    var mark: CopiedMark { CopiedMark(folder: folder.appending("config")) }
    var markPath: String { folder.appending("config/recovery.json") }

    func fileText() throws -> String {
        try String(contentsOfFile: markPath, encoding: .utf8)
    }

    static func hex(_ s: SecretBytes) -> String {
        s.bytes.map { String(format: "%02x", $0) }.joined()
    }

    @Test func matchesIsFalseWithoutAFolder() throws {
        #expect(try mark.matches(RecoveryCode.generate()) == false)
    }

    @Test func matchesIsFalseWithoutAMark() throws {
        try SecureFile.ensurePrivateFolder(folder.appending("config"))

        #expect(try mark.matches(RecoveryCode.generate()) == false)
    }

    @Test func matchesTheCodeItWasSetFor() throws {
        let code = RecoveryCode.generate()

        try mark.set(for: code)

        #expect(try mark.matches(code))
        #expect(FileManager.default.fileExists(atPath: markPath))
    }

    @Test func doesNotMatchAnotherCode() throws {
        let code = RecoveryCode.generate()
        try mark.set(for: code)

        #expect(try mark.matches(RecoveryCode.generate()) == false)
    }

    @Test func settingAgainForANewCodeForgetsTheOldOne() throws {
        let old = RecoveryCode.generate()
        let new = RecoveryCode.generate()
        try mark.set(for: old)

        try mark.set(for: new)

        #expect(try mark.matches(new))
        #expect(try mark.matches(old) == false)
    }

    @Test func markNeverHoldsTheCodeOrItsHex() throws {
        let code = RecoveryCode.generate()
        try mark.set(for: code)

        let text = try fileText()
        let lettersOnly = code.text.replacingOccurrences(of: "-", with: "")

        #expect(!text.contains(code.text))
        #expect(!text.uppercased().contains(lettersOnly))
        #expect(!text.lowercased().contains(Self.hex(code)))
        #expect(!text.lowercased().contains(lettersOnly.lowercased()))
    }

    @Test func eachMarkHasItsOwnSalt() throws {
        let code = RecoveryCode.generate()
        try mark.set(for: code)
        let first = try fileText()

        try mark.set(for: code)

        #expect(try fileText() != first, "the same code must not give the same file twice")
        #expect(try mark.matches(code))
    }

    @Test func markFileIsPrivate() throws {
        try mark.set(for: RecoveryCode.generate())

        let attributes = try FileManager.default.attributesOfItem(atPath: markPath)
        let permissions = try #require(attributes[.posixPermissions] as? NSNumber).intValue

        #expect(permissions & 0o077 == 0)
    }

    @Test func clearRemovesTheMark() throws {
        let code = RecoveryCode.generate()
        try mark.set(for: code)

        try mark.clear()

        #expect(try mark.matches(code) == false)
        #expect(!FileManager.default.fileExists(atPath: markPath))
    }

    @Test func clearWithoutAMarkIsFine() throws {
        try SecureFile.ensurePrivateFolder(folder.appending("config"))

        try mark.clear()
    }

    @Test func garbledMarkIsAConfigurationError() throws {
        try SecureFile.ensurePrivateFolder(folder.appending("config"))
        try SecureFile.write(markPath, Array("{\"version\":1,\"salt\":\"zz\",\"fingerprint\":\"00\"}".utf8))

        let error = #expect(throws: VaultError.self) { try mark.matches(RecoveryCode.generate()) }

        #expect(error?.configurationPath == markPath)
    }
}
