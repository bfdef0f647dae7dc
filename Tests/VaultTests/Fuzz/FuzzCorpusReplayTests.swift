import Testing
import TestSupport

/// Replays the fuzz seed corpus (`FuzzCorpus`) of Vault's fuzz targets through the same oracles the
/// libFuzzer harnesses use, so an input that once broke the code stays fixed.
///
/// Serialized: the askpass cases spawn `/bin/cat` (see `AskpassTests` on children and pipes).
@Suite("Fuzz corpus replay (Vault)", .serialized)
struct VaultFuzzCorpusReplayTests {
    /// Each target's oracle (its `*FuzzCheck`), by the name of its corpus folder.
    static let oracles: [String: @Sendable (UnsafeRawBufferPointer) -> String?] = [
        "policy": { PolicyFuzzCheck.violation($0, parses: 16) },
        "secret-reader": { SecretReaderFuzzCheck.violation($0) },
        "askpass": { AskpassFuzzCheck.violation($0) },
        "gate-protocol": { GateProtocolFuzzCheck.violation($0) },
    ]

    @Test(arguments: FuzzInput.all(of: ["policy", "secret-reader", "askpass", "gate-protocol"]))
    func inputIsHandled(_ input: FuzzInput) throws {
        let problem = try input.violation(Self.oracles[input.target]!)
        #expect(problem == nil, "\(input)")
    }

    @Test(arguments: ["policy", "secret-reader", "askpass", "gate-protocol"])
    func corpusIsPresent(_ target: String) {
        #expect(FuzzCorpus.files(target).count >= 5, "Fuzz/corpus/\(target) is missing or nearly empty")
    }
}
