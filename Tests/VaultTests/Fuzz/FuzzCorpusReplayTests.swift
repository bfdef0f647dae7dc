import Foundation
import Testing

/// Replays the fuzz seed corpus (`Fuzz/corpus/<target>/`, every file, crash inputs included) through the same
/// oracles the libFuzzer harnesses use, so an input that once broke the code stays fixed.
///
/// Serialized: the askpass cases spawn `/bin/cat` (see `AskpassTests` on children and pipes).
@Suite("Fuzz corpus replay (Vault)", .serialized)
struct VaultFuzzCorpusReplayTests {
    @Test(arguments: FuzzCorpus.files("policy"))
    func policyInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("policy", file)
        let problem = bytes.withUnsafeBytes { PolicyFuzzCheck.violation($0, parses: 16) }
        #expect(problem == nil, "policy/\(file)")
    }

    @Test(arguments: FuzzCorpus.files("secret-reader"))
    func secretReaderInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("secret-reader", file)
        let problem = bytes.withUnsafeBytes { SecretReaderFuzzCheck.violation($0) }
        #expect(problem == nil, "secret-reader/\(file)")
    }

    @Test(arguments: FuzzCorpus.files("askpass"))
    func askpassInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("askpass", file)
        let problem = bytes.withUnsafeBytes { AskpassFuzzCheck.violation($0) }
        #expect(problem == nil, "askpass/\(file)")
    }

    @Test(arguments: FuzzCorpus.files("gate-protocol"))
    func gateProtocolInputIsHandled(_ file: String) throws {
        let bytes = try FuzzCorpus.read("gate-protocol", file)
        let problem = bytes.withUnsafeBytes { GateProtocolFuzzCheck.violation($0) }
        #expect(problem == nil, "gate-protocol/\(file)")
    }

    @Test(arguments: ["policy", "secret-reader", "askpass", "gate-protocol"])
    func corpusIsPresent(_ target: String) {
        #expect(FuzzCorpus.files(target).count >= 5, "Fuzz/corpus/\(target) is missing or nearly empty")
    }
}

/// The seed corpus folder of each fuzz target, found from this file's path.
enum FuzzCorpus {
    static func folder(_ target: String, from file: String = #filePath) -> URL {
        URL(fileURLWithPath: file)
            .deletingLastPathComponent()  // Fuzz
            .deletingLastPathComponent()  // VaultTests
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
