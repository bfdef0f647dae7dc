import TestSupport
import Foundation
import Testing
@testable import VaultRules

@Suite struct PolicyFileTests {
    let folder = TemporaryFolder()
    var configFolder: String { folder.appending("config/vaultctl") }
    var policyPath: String { "\(configFolder)/policy.json" }

    // MARK: PolicyReading.strict()

    @Test func strictWithoutFolderGivesBuiltIn() throws {
        #expect(try PolicyReading(configFolder: configFolder).strict() == Policy.builtIn)
        #expect(!FileManager.default.fileExists(atPath: configFolder))
    }

    @Test func strictWithoutFileGivesBuiltIn() throws {
        try makeConfigFolder()

        #expect(try PolicyReading(configFolder: configFolder).strict() == Policy.builtIn)
    }

    @Test func strictReadsPrivatePolicyFile() throws {
        try writeFile(policyPath, #"{"version":1,"rateLimit":{"failures":7},"slotDefaults":{"allowSupply":true}}"#, mode: 0o600)

        let policy = try PolicyReading(configFolder: configFolder).strict()

        #expect(policy.rateLimit.failures == 7)
        #expect(policy.allowSupplyByDefault)
        #expect(policy.remoteRanges == Policy.builtIn.remoteRanges)
    }

    /// A policy file others can read, or one in a folder others can read: refused, naming which.
    @Test(arguments: [false, true])
    func strictRefusesAFileOrFolderOthersCanRead(folderOpen: Bool) throws {
        try writeFile(policyPath, #"{"version":1}"#, mode: folderOpen ? 0o600 : 0o644)
        if folderOpen { #expect(chmod(configFolder, 0o755) == 0) }

        let error = #expect(throws: VaultError.self) { try PolicyReading(configFolder: configFolder).strict() }

        guard case .unsafePermissions(let path, _)? = error?.slotError else {
            Issue.record("expected unsafePermissions, got \(String(describing: error))")
            return
        }
        #expect(path == (folderOpen ? configFolder : policyPath))
    }

    @Test func strictRefusesSymlinkedPolicyFile() throws {
        let real = folder.appending("real.json")
        try writeFile(real, #"{"version":1}"#, mode: 0o600)
        try makeConfigFolder()
        #expect(symlink(real, policyPath) == 0)

        let error = #expect(throws: VaultError.self) { try PolicyReading(configFolder: configFolder).strict() }

        guard case .unsafePermissions? = error?.slotError else {
            Issue.record("expected unsafePermissions, got \(String(describing: error))")
            return
        }
    }

    @Test func strictOfInvalidDocumentNamesTheFile() throws {
        try writeFile(policyPath, #"{"version":1,"rateLimit":{"failurez":3}}"#, mode: 0o600)

        let error = #expect(throws: VaultError.self) { try PolicyReading(configFolder: configFolder).strict() }

        guard case .configuration(let path, let detail)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(path == policyPath)
        #expect(detail.hasPrefix(#"unknown key "rateLimit.failurez""#))
    }

    @Test func strictOfOversizedFileIsConfigurationError() throws {
        try writeFile(policyPath, #"{"version":1}"# + String(repeating: " ", count: 64 * 1024), mode: 0o600)

        let error = #expect(throws: VaultError.self) { try PolicyReading(configFolder: configFolder).strict() }

        #expect(error?.configurationPath == policyPath)
    }

    // MARK: check(file:)

    @Test func checkReadsFileOthersCanRead() throws {
        let path = folder.appending("shared-policy.json")
        try writeFile(path, #"{"version":1,"rateLimit":{"blockSeconds":900}}"#, mode: 0o644)

        #expect(try Policy.check(file: path).rateLimit.blockSeconds == 900)
    }

    @Test func checkOfTheShippedDefaultGivesBuiltIn() throws {
        #expect(try Policy.check(file: "\(policyRepositoryRoot())/policy/default.json") == Policy.builtIn)
    }

    @Test func checkOfInvalidFileNamesFileAndKey() throws {
        let path = folder.appending("bad.json")
        try writeFile(path, #"{"version":1,"origin":{"remoteRangez":[]}}"#, mode: 0o644)

        let error = #expect(throws: VaultError.self) { try Policy.check(file: path) }

        guard case .configuration(let errorPath, let detail)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(detail == #"unknown key "origin.remoteRangez"; remove it or fix its spelling (this vaultctl knows: remoteRanges, nearbyRanges)"#)
    }

    @Test func checkOfMissingFileIsConfigurationError() {
        let path = folder.appending("nothing.json")

        let error = #expect(throws: VaultError.self) { try Policy.check(file: path) }

        guard case .configuration(let errorPath, let detail)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(detail == "cannot open it (No such file or directory)")
    }

    @Test func checkOfFolderIsConfigurationError() {
        let error = #expect(throws: VaultError.self) { try Policy.check(file: folder.path) }

        guard case .configuration(_, let detail)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(detail == "it is a folder, not a policy file")
    }

    @Test func checkOfOversizedFileIsConfigurationError() throws {
        let path = folder.appending("big.json")
        try writeFile(path, String(repeating: " ", count: 64 * 1024 + 1), mode: 0o644)

        let error = #expect(throws: VaultError.self) { try Policy.check(file: path) }

        guard case .configuration(_, let detail)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(detail == "it is larger than 64 KiB, more than any policy needs")
    }

    @Test func checkOfEndlessDeviceStopsAtTheLimit() {
        let error = #expect(throws: VaultError.self) { try Policy.check(file: "/dev/zero") }

        #expect(error?.configurationPath == "/dev/zero")
    }

    @Test func checkOfFIFOWithoutWriterDoesNotHang() throws {
        let path = folder.appending("fifo")
        #expect(mkfifo(path, 0o600) == 0)

        let error = #expect(throws: VaultError.self) { try Policy.check(file: path) }

        #expect(error?.configurationPath == path)
    }

    // MARK: Helpers

    private func makeConfigFolder() throws {
        try FileManager.default.createDirectory(atPath: configFolder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    private func writeFile(_ path: String, _ text: String, mode: Int) throws {
        try makeConfigFolder()
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                               attributes: [.posixPermissions: mode]))
        #expect(chmod(path, mode_t(mode)) == 0)  // createFile's mode is subject to the umask
    }
}
