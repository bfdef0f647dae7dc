#if canImport(Glibc)
import Glibc
#endif

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

/// Small whole-file helpers for test fixtures (never for secrets of the product: those are test data here).
enum FileText {
    static func read(_ path: String) -> String? {
        FileBytes.read(path).map { String(decoding: $0, as: UTF8.self) }
    }

    @discardableResult
    static func write(_ path: String, _ text: String, mode: mode_t = 0o600) -> Bool {
        FileBytes.write(path, Array(text.utf8), mode: mode)
    }
}

enum FileBytes {
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out += chunk[..<n]
        }
        return out
    }

    /// Replaces the file's contents in place (keeping its inode, owner and mode when it exists).
    @discardableResult
    static func write(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed()
            .drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
