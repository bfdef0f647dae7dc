import TestSupport
import Foundation
import Synchronization
import Testing
@testable import Vault
@testable import VaultRules

@Suite struct ModeRecordTests {
    let folder = TemporaryFolder()
    var configFolder: String { folder.appending("config/vaultctl") }
    var record: ModeRecord { ModeRecord(folder: configFolder) }

    // MARK: What it remembers

    @Test func recordRemembersSetsAndRemovals() throws {
        try record.set(name("alpha"), .sync)
        try record.set(name("bravo"), .device)
        #expect(try record.load() == [name("alpha"): .sync, name("bravo"): .device])
        #expect(try record.mode(of: name("alpha")) == .sync)

        try record.set(name("alpha"), .device)
        #expect(try record.mode(of: name("alpha")) == .device)

        try record.set(name("alpha"), nil)
        #expect(try record.load() == [name("bravo"): .device])
        #expect(try record.mode(of: name("alpha")) == nil)
    }

    @Test func recordWithoutFolderIsEmptyAndCreatesNothing() throws {
        #expect(try record.load().isEmpty)
        #expect(try record.mode(of: api) == nil)
        #expect(!FileManager.default.fileExists(atPath: configFolder))
    }

    @Test func recordIsReadableByAFreshInstance() throws {
        try record.set(api, .sync)

        #expect(try ModeRecord(folder: configFolder).mode(of: api) == .sync)
    }

    @Test func recordSkipsNamesThatAreNotSlotNames() throws {
        try writeRecordFile(#"{"version":1,"slots":{"../etc":"sync",".hidden":"device","ok":"device"}}"#)

        #expect(try record.load() == [name("ok"): .device])
    }

    @Test func recordNamesTheFleetWithoutANewVersion() throws {
        try record.set(api, .fleet)

        #expect(try record.lookup(api) == .recorded(.fleet))
        #expect(try record.load() == [api: .fleet])
        let text = try String(contentsOfFile: "\(configFolder)/modes.json", encoding: .utf8)
        #expect(text.contains(#""version" : 1"#) || text.contains(#""version":1"#), "\(text)")
        #expect(text.contains(#""fleet""#))
    }

    @Test func anEntryNamingNoSlotIsStillUnreadable() throws {
        try writeRecordFile(#"{"version":1,"slots":{"api":"cloud"}}"#)

        #expect(try record.lookup(api) == .unreadable(detail: #"its entry for 'api' is not "device", "sync" or "fleet""#))
    }

    // MARK: Permissions

    @Test func recordFileIsPrivateInPrivateFolder() throws {
        try record.set(api, .sync)

        #expect(try permissions(of: configFolder) == 0o700)
        #expect(try permissions(of: "\(configFolder)/modes.json") == 0o600)
        #expect(try permissions(of: "\(configFolder)/.modes.lock") == 0o600)
    }

    @Test func recordRefusesFolderOthersCanRead() throws {
        try record.set(api, .sync)
        #expect(chmod(configFolder, 0o755) == 0)

        let error = #expect(throws: VaultError.self) { try record.load() }

        guard case .unsafePermissions(let path, _)? = error?.slotError else {
            Issue.record("expected unsafePermissions, got \(String(describing: error))")
            return
        }
        #expect(path == configFolder)
    }

    // MARK: Files it cannot read

    @Test func garbageRecordIsConfigurationError() throws {
        try writeRecordFile("this is not json")

        let loadError = #expect(throws: VaultError.self) { try record.load() }
        #expect(loadError?.configurationPath == "\(configFolder)/modes.json")

        let setError = #expect(throws: VaultError.self) { try record.set(api, .sync) }
        #expect(setError?.configurationPath == "\(configFolder)/modes.json")
        #expect(try String(contentsOfFile: "\(configFolder)/modes.json", encoding: .utf8) == "this is not json")
    }

    @Test func recordOfUnknownVersionIsConfigurationError() throws {
        try writeRecordFile(#"{"version":2,"slots":{"api":"sync"}}"#)

        let error = #expect(throws: VaultError.self) { try record.load() }

        #expect(error?.configurationPath == "\(configFolder)/modes.json")
    }

    // MARK: Concurrency

    @Test func concurrentSetsLoseNoUpdate() throws {
        let names = (0..<50).map { name("slot\($0)") }
        let record = self.record
        let failures = Mutex<[String]>([])

        DispatchQueue.concurrentPerform(iterations: names.count) { i in
            do {
                try record.set(names[i], i.isMultiple(of: 2) ? .sync : .device)
            } catch {
                failures.withLock { $0.append("\(names[i]): \(error)") }
            }
        }

        #expect(failures.withLock { $0 }.isEmpty)
        let loaded = try record.load()
        #expect(loaded.count == names.count)
        for (i, n) in names.enumerated() {
            #expect(loaded[n] == (i.isMultiple(of: 2) ? .sync : .device))
        }
    }

    // MARK: Helpers

    private func writeRecordFile(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: configFolder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let path = "\(configFolder)/modes.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                               attributes: [.posixPermissions: 0o600]))
    }

    private func permissions(of path: String) throws -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return Int(st.st_mode & 0o777)
    }
}
