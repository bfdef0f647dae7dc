import Foundation

/// The seed corpus of each fuzz target (`Fuzz/corpus/<target>/`, every file, crash inputs included), which
/// the corpus replay tests of every test target run through the same oracles the libFuzzer harnesses use
/// (the targets' `*FuzzCheck` types), so an input that once broke the code stays fixed.
public enum FuzzCorpus {
    /// The target's corpus folder, found from this file's path (`Tests/TestSupport/FuzzCorpus.swift`).
    public static func folder(_ target: String, from file: String = #filePath) -> URL {
        URL(fileURLWithPath: file)
            .deletingLastPathComponent()  // TestSupport
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // the package
            .appendingPathComponent("Fuzz/corpus/\(target)")
    }

    /// Names of the regular files in the target's corpus, sorted; empty when the folder is missing.
    public static func files(_ target: String) -> [String] {
        let url = folder(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    public static func read(_ target: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder(target).appendingPathComponent(name)))
    }
}

/// One file of a fuzz target's corpus, an argument of a replay test.
public struct FuzzInput: Sendable, CustomStringConvertible {
    public let target: String
    public let file: String

    /// Every file of each of `targets`' corpora, target by target.
    public static func all(of targets: [String]) -> [FuzzInput] {
        targets.flatMap { target in FuzzCorpus.files(target).map { FuzzInput(target: target, file: $0) } }
    }

    /// What `check` finds wrong with the file's bytes (nil: nothing).
    public func violation(_ check: (UnsafeRawBufferPointer) -> String?) throws -> String? {
        try FuzzCorpus.read(target, file).withUnsafeBytes { check($0) }
    }

    public var description: String { "\(target)/\(file)" }
}
