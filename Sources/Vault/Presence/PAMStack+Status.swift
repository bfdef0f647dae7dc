import JSON
import VaultRules

/// What `status` and `device-key` say of the PAM stack, in words and in `--json`. The gate reads the stack
/// only to explain a failed authentication (`PAMGate`), so this half is the CLI's.
extension PAMStack {
    /// One sentence: which factors the file names, and how (the controls as written).
    public var sentence: String {
        if !unreadable.isEmpty {
            return "The PAM stack \(file) could not be read in full here (\(unreadable.joined(separator: ", "))), so what it asks for is not known."
        }
        let place = authFrom.map { "\(file), whose auth lines are \($0)'s," } ?? "\(file),"
        guard !auth.isEmpty else { return "The PAM stack \(place) names no authentication module." }
        let named = auth.filter { $0.factor != nil }.map { "\($0.factor!) (\($0.module), \($0.control))" }
        if named.isEmpty {
            return "The PAM stack \(place) names no password, fingerprint or security-key module vaultctl knows: \(auth.map(\.module).joined(separator: ", "))."
        }
        return "Reads are authenticated by the PAM stack \(place) which names: \(named.joined(separator: "; "))."
    }

    public var json: String {
        let entries = auth.map { e in
            "{\"module\":\(Self.quoted(e.module)),\"control\":\(Self.quoted(e.control)),\"factor\":\(e.factor.map(Self.quoted) ?? "null")}"
        }
        let from = authFrom.map { ",\"authFrom\":\(Self.quoted($0))" } ?? ""
        let lost = unreadable.isEmpty ? "" : ",\"unreadable\":[\(unreadable.map(Self.quoted).joined(separator: ","))]"
        return "{\"file\":\(Self.quoted(file))\(from)\(lost),\"factors\":[\(factors.map(Self.quoted).joined(separator: ","))],\"auth\":[\(entries.joined(separator: ","))]}"
    }

    static func quoted(_ s: String) -> String { JSONEscaping.quoted(s) }
}
