import Foundation
import Testing
@testable import Slots

/// Replays the fuzz seed corpus (`Fuzz/corpus/<target>/`, every file, crash inputs included) through the same
/// oracles the libFuzzer harnesses use, so an input that once broke the code stays fixed.
@Suite("Fuzz corpus replay (Slots)")
struct SlotsFuzzCorpusReplayTests {
    @Test(arguments: FuzzCorpus.files("sealed-file"))
    func sealedFileInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("sealed-file", file)
        let problem = bytes.withUnsafeBytes { SealedFileFuzzCheck.violation($0) }
        #expect(problem == nil, "sealed-file/\(file)")
    }

    @Test(arguments: FuzzCorpus.files("slot-name"))
    func slotNameInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("slot-name", file)
        let problem = bytes.withUnsafeBytes { SlotNameFuzzCheck.violation($0) }
        #expect(problem == nil, "slot-name/\(file)")
    }

    @Test func validSealInTheCorpusOpens() throws {
        let bytes = try FuzzCorpus.read("sealed-file", "valid-kat")
        let file = bytes.withUnsafeBytes { SecretBytes(copying: $0) }
        let plain = try SealedFileFormat.open(file, name: SealedFileFuzzCheck.name, machineTag: SealedFileFuzzCheck.machineTag,
                                              key: SealedFileFuzzCheck.key, path: SealedFileFuzzCheck.path)
        #expect(plain.testBytes == Array("known answer".utf8))
    }

    @Test(arguments: ["sealed-file", "slot-name"])
    func corpusIsPresent(_ target: String) {
        #expect(FuzzCorpus.files(target).count >= 5, "Fuzz/corpus/\(target) is missing or nearly empty")
    }
}

/// The seed corpus folder of each fuzz target, found from this file's path.
enum FuzzCorpus {
    static func folder(_ target: String, from file: String = #filePath) -> URL {
        URL(fileURLWithPath: file)
            .deletingLastPathComponent()  // Fuzz
            .deletingLastPathComponent()  // SlotsTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // the package
            .appendingPathComponent("Fuzz/corpus/\(target)")
    }

    /// Names of the regular files in the target's corpus, sorted; empty when the folder is missing.
    static func files(_ target: String) -> [String] {
        let url = folder(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    static func read(_ target: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder(target).appendingPathComponent(name)))
    }
}
