import Foundation
import Testing
@testable import VaultRules

/// The path the parse tests give to `Policy.parse`; every rejection must name it.
let policyTestPath = "/test/policy.json"

/// Parses `bytes` as a policy document at `policyTestPath`.
func parsePolicy(bytes: [UInt8]) throws(VaultError) -> Policy {
    let result = bytes.withUnsafeBytes { raw in
        Result { () throws(VaultError) -> Policy in try Policy.parse(raw, path: policyTestPath) }
    }
    return try result.get()
}

/// Parses `text` (UTF-8) as a policy document at `policyTestPath`.
func parsePolicy(_ text: String) throws(VaultError) -> Policy {
    try parsePolicy(bytes: Array(text.utf8))
}

/// The detail of the `.configuration` error that rejects `bytes`; records an issue (and returns nil) when the
/// document is accepted, when the error is another case, or when it names another path.
func policyRejection(bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    do {
        let policy = try parsePolicy(bytes: bytes)
        Issue.record("accepted: \(policy)", sourceLocation: sourceLocation)
        return nil
    } catch {
        guard case .configuration(let path, let detail) = error else {
            Issue.record("expected .configuration, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(path == policyTestPath, sourceLocation: sourceLocation)
        #expect(!detail.contains("\n") && !detail.contains("\r"), "detail is not one line: \(detail)",
                sourceLocation: sourceLocation)
        #expect(!detail.hasSuffix("."), "the CLI adds the final period: \(detail)", sourceLocation: sourceLocation)
        return detail
    }
}

/// `policyRejection(bytes:)` for UTF-8 text.
func policyRejection(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    policyRejection(bytes: Array(text.utf8), sourceLocation: sourceLocation)
}

/// The repository's root folder, found from this file's path (Tests/VaultTests/Policy/<file>).
func policyRepositoryRoot(filePath: String = #filePath) -> String {
    var url = URL(fileURLWithPath: filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}
