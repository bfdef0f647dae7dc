import TestSupport
import Foundation
import Testing
@testable import VaultRules

/// What each named reading gives when the user's file or root's is missing, malformed or fine: the fallbacks
/// the call sites used to write each for itself.
@Suite struct PolicyReadingTests {
    let folder = TemporaryFolder()
    var configFolder: String { folder.appending("config/vaultctl") }
    var userPath: String { "\(configFolder)/policy.json" }
    /// Root's policy in a temporary folder, read as `RootPolicy.load` reads its file, none the built-in one
    /// (the ownership checks of root's own file need root).
    var rootPath: String { folder.appending("etc/policy.json") }

    static let malformed = #"{"version":1,"rateLimit":{"failurez":3}}"#
    static let userFile = #"{"version":1,"rateLimit":{"failures":2},"prompt":{"askpassSeconds":30},"slotDefaults":{"allowSupply":true}}"#
    static let rootFile = #"{"version":1,"rateLimit":{"failures":5,"blockSeconds":900},"prompt":{"askpassSeconds":60},"slotDefaults":{"allowSupply":true}}"#

    func reading() -> PolicyReading {
        let rootPath = rootPath
        return PolicyReading(configFolder: configFolder, root: { () throws(VaultError) -> Policy in
            access(rootPath, F_OK) == 0 ? try Policy.check(file: rootPath) : .builtIn
        })
    }

    // MARK: strict

    @Test func strictGivesTheUsersOwnOrBuiltIn() throws {
        #expect(try reading().strict() == .builtIn)

        try writeUserFile(Self.userFile)
        #expect(try reading().strict() == policy(Self.userFile))
    }

    @Test func strictRefusesAMalformedFileNamingIt() throws {
        try writeUserFile(Self.malformed)

        let error = #expect(throws: VaultError.self) { try reading().strict() }

        #expect(error?.configurationPath == userPath)
    }

    @Test func strictRefusesAFileOthersCanRead() throws {
        try writeUserFile(Self.userFile, mode: 0o644)

        let error = #expect(throws: VaultError.self) { try reading().strict() }

        guard case .unsafePermissions? = error?.slotError else {
            Issue.record("expected unsafePermissions, got \(String(describing: error))")
            return
        }
    }

    /// The file is read when the reading is made, once: what changes after does not change it.
    @Test func theUsersFileIsReadOnce() throws {
        try writeUserFile(Self.userFile)
        let reading = reading()
        try writeFile(rootPath, Self.rootFile, mode: 0o644)
        try writeUserFile(Self.malformed)

        #expect(try reading.strict() == policy(Self.userFile))
        #expect(try reading.effective() == policy(Self.rootFile).tightened(by: policy(Self.userFile)))
    }

    // MARK: forPrompt

    @Test func forPromptGivesTheUsersOwnOrBuiltIn() throws {
        #expect(reading().forPrompt() == .builtIn)

        try writeUserFile(Self.userFile)
        #expect(reading().forPrompt() == (try policy(Self.userFile)))
    }

    @Test func forPromptGivesBuiltInForAMalformedFile() throws {
        try writeUserFile(Self.malformed)

        #expect(reading().forPrompt() == .builtIn)
    }

    @Test func forPromptGivesBuiltInForAFileOthersCanRead() throws {
        try writeUserFile(Self.userFile, mode: 0o644)

        #expect(reading().forPrompt() == .builtIn)
    }

    // MARK: effective

    @Test func effectiveWithoutAnyFileIsBuiltIn() throws {
        #expect(try reading().effective() == .builtIn)
    }

    @Test func effectiveIsRootsWhenTheUserHasNoFile() throws {
        try writeFile(rootPath, Self.rootFile, mode: 0o644)

        #expect(try reading().effective() == policy(Self.rootFile))
    }

    @Test func effectiveIsRootsTightenedByTheUsers() throws {
        try writeFile(rootPath, Self.rootFile, mode: 0o644)
        try writeUserFile(Self.userFile)

        let effective = try reading().effective()

        #expect(effective.rateLimit == RateLimitPolicy(failures: 2, windowSeconds: 300, blockSeconds: 900))
        #expect(effective.askpassSeconds == 30)
        #expect(effective.allowSupplyByDefault)
        #expect(effective == (try policy(Self.rootFile).tightened(by: policy(Self.userFile))))
    }

    @Test func aMalformedUserFileTightensNothing() throws {
        try writeFile(rootPath, Self.rootFile, mode: 0o644)
        try writeUserFile(Self.malformed)

        #expect(try reading().effective() == policy(Self.rootFile))
    }

    @Test func aUserFileOthersCanReadTightensNothing() throws {
        try writeFile(rootPath, Self.rootFile, mode: 0o644)
        try writeUserFile(Self.userFile, mode: 0o644)

        #expect(try reading().effective() == policy(Self.rootFile))
    }

    @Test func aMalformedRootFileIsAnError() throws {
        try writeFile(rootPath, Self.malformed, mode: 0o644)
        try writeUserFile(Self.userFile)

        let error = #expect(throws: VaultError.self) { try reading().effective() }

        #expect(error?.configurationPath == rootPath)
    }

    // MARK: effectiveForPrompt

    @Test func effectiveForPromptIsEffectiveWhenRootsCanBeRead() throws {
        try writeFile(rootPath, Self.rootFile, mode: 0o644)
        try writeUserFile(Self.malformed)

        #expect(reading().effectiveForPrompt() == (try policy(Self.rootFile)))
    }

    @Test func effectiveForPromptFallsBackToTheUsersOwnWhenRootsIsMalformed() throws {
        try writeFile(rootPath, Self.malformed, mode: 0o644)
        try writeUserFile(Self.userFile)

        #expect(reading().effectiveForPrompt() == (try policy(Self.userFile)))
    }

    @Test func effectiveForPromptFallsBackToBuiltInWhenBothAreMalformed() throws {
        try writeFile(rootPath, Self.malformed, mode: 0o644)
        try writeUserFile(Self.malformed)

        #expect(reading().effectiveForPrompt() == .builtIn)
    }

    // MARK: Helpers

    private func policy(_ json: String) throws -> Policy {
        try parsePolicy(json)
    }

    private func writeUserFile(_ text: String, mode: Int = 0o600) throws {
        try writeFile(userPath, text, mode: mode)
    }

    private func writeFile(_ path: String, _ text: String, mode: Int) throws {
        let parent = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(chmod(parent, 0o700) == 0)
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                               attributes: [.posixPermissions: mode]))
        #expect(chmod(path, mode_t(mode)) == 0)  // createFile's mode is subject to the umask
    }
}
