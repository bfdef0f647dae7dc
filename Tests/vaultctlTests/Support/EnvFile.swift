#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// Reads the `export NAME='value'` lines the repository's scripts write to `DIR/env`.
enum EnvFile {
    struct Unreadable: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) is missing or has no export lines" }
    }

    static func load(_ path: String) throws -> [String: String] {
        guard let text = FileText.read(path) else { throw Unreadable(path: path) }
        var out: [String: String] = [:]
        for raw in text.split(separator: "\n") {
            var line = raw.trimmingSpaces()
            if line.hasPrefix("export ") { line = String(line.dropFirst("export ".count)).trimmingSpaces() }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let name = String(line[..<eq])
            var value = String(line[line.index(after: eq)...])
            if value.count >= 2, value.hasPrefix("'"), value.hasSuffix("'") {
                value = String(value.dropFirst().dropLast())
            } else if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            out[name] = value
        }
        guard !out.isEmpty else { throw Unreadable(path: path) }
        return out
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed()
            .drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
