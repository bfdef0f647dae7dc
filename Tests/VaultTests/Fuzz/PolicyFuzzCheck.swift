@testable import GateProtocol
import Vault
@testable import VaultRules

/// The oracle of the `policy` fuzz target, shared by the libFuzzer harness (`Fuzz/`, through a symlink) and
/// the corpus replay test: arbitrary bytes offered to `Policy.parse` as a policy document.
///
/// Whatever the bytes: no trap, the same answer every time, and either a policy inside the documented bounds
/// (at most 64 KiB read; a non-empty remote list; at most 256 ranges a list; rate-limit numbers in range;
/// each range holds its own network address, which prints and parses back to itself) or one
/// `.configuration` error naming the path given, whose detail is a single printable line with no final period.
enum PolicyFuzzCheck {
    static let path = "/fuzz/policy.json"

    /// Nil when `input` is handled as it must be; otherwise what went wrong.
    ///
    /// `parses` times the same bytes must give the same answer. Two suffice while fuzzing (libFuzzer runs an
    /// input again and again); the replay test asks for more, so an order-dependent answer cannot slip by.
    static func violation(_ input: UnsafeRawBufferPointer, parses: Int = 2) -> String? {
        let first = outcome(input)
        for _ in 1..<max(parses, 2) {
            let again = outcome(input)
            guard first == again else { return "two parses of the same bytes disagree: \(first) / \(again)" }
        }
        switch first {
        case .success(let policy):
            return policyViolation(policy, size: input.count)
        case .failure(let error):
            guard case .configuration(let where_, let detail) = error else { return "parse threw \(error), not .configuration" }
            if where_ != path { return "the error names \(where_.debugDescription), not the path given" }
            return detailViolation(detail)
        }
    }

    enum Outcome: Equatable {
        case success(Policy)
        case failure(VaultError)
        static func == (a: Outcome, b: Outcome) -> Bool {
            switch (a, b) {
            case (.success(let x), .success(let y)): return x == y
            case (.failure(let x), .failure(let y)): return "\(x)" == "\(y)"
            default: return false
            }
        }
    }

    static func outcome(_ input: UnsafeRawBufferPointer) -> Outcome {
        do throws(VaultError) {
            return .success(try Policy.parse(input, path: path))
        } catch {
            return .failure(error)
        }
    }

    static func policyViolation(_ policy: Policy, size: Int) -> String? {
        if size > Policy.maximumDocumentSize { return "accepted a document of \(size) bytes" }
        if policy.remoteRanges.isEmpty { return "accepted an empty remoteRanges" }
        if policy.remoteRanges.count > Policy.maximumRangeCount || policy.nearbyRanges.count > Policy.maximumRangeCount {
            return "accepted \(max(policy.remoteRanges.count, policy.nearbyRanges.count)) ranges in one list"
        }
        let r = policy.rateLimit
        if !(1...100).contains(r.failures) { return "accepted rateLimit.failures \(r.failures)" }
        if !(1...86400).contains(r.windowSeconds) { return "accepted rateLimit.windowSeconds \(r.windowSeconds)" }
        if !(1...86400).contains(r.blockSeconds) { return "accepted rateLimit.blockSeconds \(r.blockSeconds)" }
        for range in policy.remoteRanges + policy.nearbyRanges {
            if let problem = rangeViolation(range) { return problem }
        }
        return nil
    }

    static func rangeViolation(_ range: IPRange) -> String? {
        let text = range.description.debugDescription
        if range.description.utf8.count > 64 { return "accepted a range of \(range.description.utf8.count) bytes" }
        if range.network.bytes.count != 16 { return "range \(text) has a \(range.network.bytes.count)-byte network" }
        if !(0...128).contains(range.prefix) { return "range \(text) has prefix \(range.prefix)" }
        if !range.description.contains(":") && !(96...128).contains(range.prefix) {
            return "IPv4 range \(text) has prefix \(range.prefix) over the 16-byte form"
        }
        if !range.contains(range.network) { return "range \(text) does not hold its own network address" }
        guard let again = IPAddress(range.network.description), again == range.network else {
            return "the network of \(text) prints as \(range.network.description.debugDescription), which does not parse back"
        }
        guard IPRange(range.description) == range else { return "range \(text) does not parse back to itself" }
        return nil
    }

    /// One line of printable text, no final period (the caller adds the sentence's end).
    static func detailViolation(_ detail: String) -> String? {
        if detail.isEmpty { return "the error detail is empty" }
        if detail.hasSuffix(".") { return "the error detail ends with a period: \(detail.debugDescription)" }
        for scalar in detail.unicodeScalars where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
            || scalar.properties.generalCategory == .lineSeparator || scalar.properties.generalCategory == .paragraphSeparator
            || scalar.properties.generalCategory == .format {
            return "the error detail holds U+\(String(scalar.value, radix: 16)): \(detail.debugDescription)"
        }
        return nil
    }
}
