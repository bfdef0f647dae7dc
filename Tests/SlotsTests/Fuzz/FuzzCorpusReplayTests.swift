import Testing
import TestSupport
@testable import Slots

/// Replays the fuzz seed corpus (`FuzzCorpus`) of Slots' fuzz targets through the same oracles the libFuzzer
/// harnesses use, so an input that once broke the code stays fixed.
@Suite("Fuzz corpus replay (Slots)")
struct SlotsFuzzCorpusReplayTests {
    /// Each target's oracle (its `*FuzzCheck`), by the name of its corpus folder.
    static let oracles: [String: @Sendable (UnsafeRawBufferPointer) -> String?] = [
        "sealed-file": { SealedFileFuzzCheck.violation($0) },
        "slot-name": { SlotNameFuzzCheck.violation($0) },
    ]

    @Test(arguments: FuzzInput.all(of: ["sealed-file", "slot-name"]))
    func inputIsHandled(_ input: FuzzInput) throws {
        let problem = try input.violation(Self.oracles[input.target]!)
        #expect(problem == nil, "\(input)")
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
