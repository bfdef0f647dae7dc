#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// Helpers for the crash, concurrency, hygiene and permission tests: what a sandbox's files say (the mode
/// record, leftover temp files, the size of a sealed file), unique values, and real parallel processes.
extension Sandbox {
    /// What `modes.json` records for `name` ("device", "sync"), nil when it has no entry or no record.
    /// Read directly (not through vaultctl), so a test can see the record a crash left behind.
    func recordedMode(_ name: String) -> String? {
        recordedModes()[name]
    }

    /// Every entry of `modes.json`.
    func recordedModes() -> [String: String] {
        guard let bytes = FileBytes.read("\(configFolder)/modes.json"),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let slots = object["slots"] as? [String: String] else { return [:] }
        return slots
    }

    /// `.tmp-*` files (a write's temp file that a kill left behind) in the state, slots and config folders.
    func leftoverTempFiles() -> [String] {
        var out: [String] = []
        for folder in [stateFolder, "\(stateFolder)/slots", configFolder] {
            guard let dir = opendir(folder) else { continue }
            while let entry = readdir(dir) {
                let name = PamWrapperDirs.direntName(entry)
                if name.hasPrefix(".tmp-") { out.append("\(folder)/\(name)") }
            }
            closedir(dir)
        }
        return out.sorted()
    }

    /// `leftoverTempFiles()` counted by folder ("slots", "state", "config").
    func leftoverTempFilesByFolder() -> String {
        var counts: [String: Int] = [:]
        for path in leftoverTempFiles() {
            let folder = Paths.folder(of: path)
            let key = folder == configFolder ? "config" : folder == stateFolder ? "state" : "slots"
            counts[key, default: 0] += 1
        }
        return counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// Size of the sealed device file for `name` holding a value of `valueCount` bytes:
    /// "VCTLSEAL" | version | machine tag (16) | name length (1) | name | nonce (24) | ciphertext | tag (16).
    static func sealedFileSize(name: String, valueCount: Int) -> Int {
        8 + 1 + 16 + 1 + name.utf8.count + 24 + valueCount + 16
    }

    /// Size of the device file for `name`, nil when there is none.
    func deviceFileSize(_ name: String) -> Int? {
        var st = stat()
        guard lstat(slotFile(name), &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    /// The value in the keyring for `name` as `secret-tool lookup` prints it (empty when there is none).
    func keyringValue(_ name: String) -> [UInt8] {
        secretToolLookup(name).stdout
    }
}

/// Test values that tell themselves apart: each has a unique length (so a sealed file's size names the value
/// it holds, and a cut-short file matches none) and a marker at both ends (so a mix of two is visible).
enum ReliabilityData {
    /// `count` bytes: a marker, pattern bytes covering every byte value, the marker again.
    static func value(_ tag: String, count: Int) -> [UInt8] {
        let marker = Array("<\(tag)>".utf8)
        let seed = UInt8(truncatingIfNeeded: tag.hashValue)
        // Too small for two markers: one, cut to size (still unique among values of other lengths).
        guard count >= 2 * marker.count else { return Array((marker + TestData.pattern(count: count, seed: seed)).prefix(count)) }
        let middle = count - 2 * marker.count
        return marker + TestData.pattern(count: middle, seed: seed) + marker
    }

    /// `count` distinct sizes from `range`, in random order.
    static func distinctSizes(_ count: Int, in range: ClosedRange<Int>) -> [Int] {
        var sizes = Set<Int>()
        while sizes.count < count { sizes.insert(Int.random(in: range)) }
        return Array(sizes).shuffled()
    }

    /// 40 random bytes rendered as text: a marker no other test, file or library prints by chance.
    static func hygieneMarker() -> String {
        let bytes = (0..<40).map { _ in UInt8.random(in: 0...255) }
        return "hygiene-" + bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// A flag threads can set and read.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

extension Sandbox {
    /// Whether a run failed only because pam_wrapper (the test PAM tool, preloaded into every process that
    /// gets the PAM environment) could not set itself up: `pam_start` failed (78, "PAM could not start"), or
    /// its constructor lost a race for a `/tmp/pam.X` folder with another starting process and called
    /// `exit(1)` before vaultctl ran, which leaves status 1 and nothing but `PWRAP_` lines on stderr. vaultctl
    /// itself never fails without a line on stderr. The same race in the askpass child (which inherits the
    /// PAM environment) ends a fixture program that gives the right password (`correct`, `askpass-correct`)
    /// with 1 before it prints: vaultctl then says that program exited with status 1, which it never does
    /// by itself.
    static func isPAMWrapperStartFailure(_ r: ProcessResult) -> Bool {
        isPAMWrapperRace(r) || (r.status == 1 && r.droppingPAMWrapperNoise().stderr.trimmingSpaces().isEmpty && r.stdout.isEmpty)
            || (r.status == 77 && r.stderr.contains("correct exited with status 1"))
    }

    /// Runs `body` again (at most 6 times in all) while pam_wrapper failed to start.
    static func repeatingPAMWrapperStartFailures(_ body: () throws -> ProcessResult) rethrows -> ProcessResult {
        var r = try body()
        for _ in 0..<5 where isPAMWrapperStartFailure(r) {
            PamWrapperDirs.sweepStale()
            usleep(50_000)
            r = try body()
        }
        return r
    }

    /// Runs `body` again (a moment apart, at most 10 times in all) while vaultctl says another attempt holds
    /// the places the rate limit allows ("try again in a moment", 75): parallel gated commands of one user
    /// may prompt only as many at once as failures are allowed.
    static func repeatingWhileBusy(_ body: () throws -> ProcessResult) rethrows -> ProcessResult {
        var r = try body()
        for _ in 0..<9 where r.status == 75 && r.stderr.contains("try again in a moment") {
            usleep(200_000)
            r = try body()
        }
        return r
    }

    /// A gated `vaultctl ARGS` with the right password, repeated on a pam_wrapper start failure and while
    /// the rate limit's places are busy.
    static func gatedRun(_ args: [String], environment: [String: String]) -> ProcessResult {
        repeatingWhileBusy {
            repeatingPAMWrapperStartFailures {
                ProcessRunner.run(Paths.vaultctl, args, environment: environment).droppingPAMWrapperNoise()
            }
        }
    }

    /// `vaultctl read NAME` with the right password, repeated when pam_wrapper failed to start.
    func readReliably(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        try Sandbox.repeatingPAMWrapperStartFailures { try read(name, sourceLocation: sourceLocation) }
    }
}

extension Sandbox {
    /// A policy that lets a `store` over a value and a `delete` run without PAM (`gate.storeOver` and
    /// `gate.delete` false), for the tests of write order, kills and concurrency that run without
    /// pam_wrapper (a killed PAM client leaves its folder behind). The gate itself is `DestructiveGateTests`'.
    func relaxChangeGates(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try writePolicy(#"{"version": 1, "gate": {"storeOver": false, "delete": false}}"#, sourceLocation: sourceLocation)
    }

    /// `vaultctl store NAME [--mode MODE]` without pam_wrapper (a first store, or one under
    /// `relaxChangeGates`, asks no password); expects success.
    func storeWithoutPAM(_ name: String, _ secret: [UInt8], mode: String? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = runWithoutPAM(["store", name] + (mode.map { ["--mode", $0] } ?? []), stdin: .bytes(secret))
        try #require(r.status == 0, "store \(name) \(mode ?? ""): \(r)", sourceLocation: sourceLocation)
    }

    /// `vaultctl ARGS` with stdin, without pam_wrapper or an askpass program.
    func runWithoutPAM(_ args: [String], stdin: Stdin = .null, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        ProcessRunner.run(Paths.vaultctl, args, environment: environmentWithoutPAM(), stdin: stdin,
                          sourceLocation: sourceLocation)
    }

    /// `vaultctl list` without pam_wrapper, parsed: slot name → the modes it is listed in.
    func listedWithoutPAM(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Set<String>] {
        try Sandbox.parseList(runWithoutPAM(["list"], sourceLocation: sourceLocation), sourceLocation: sourceLocation)
    }
}
