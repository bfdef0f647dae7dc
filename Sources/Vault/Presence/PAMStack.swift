#if canImport(Glibc)
import Glibc
#endif
import Slots

/// What the `vaultctl` PAM service's file names for authentication, for `status --json` and `device-key
/// status`: each `auth` module (through `@include`, `include` and `substack`), with its control, and the
/// factor a known module asks for (`pam_fprintd`: a fingerprint; `pam_u2f`: a security key; `pam_unix` and
/// the other password modules: a password).
///
/// It reads what the file says, and claims no more: how the lines combine is the file's controls (shown as
/// written), and a module it does not know names no factor. libpam has no interface that parses its
/// configuration for a program, so this reads the lines itself: `TYPE CONTROL MODULE [ARGS]`, `#` comments,
/// `\` continued lines, `-TYPE`, `[value=action ...]` controls, `@include FILE`; at most 8 levels of inclusion
/// and 64 KiB a file.
public struct PAMStack: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public let control: String
        public let module: String
        public let factor: String?
    }

    /// The service file read (`/etc/pam.d/vaultctl`, else `/usr/lib/pam.d/vaultctl`, else `other`'s).
    public let file: String
    public let auth: [Entry]

    /// The factors, each once, in the order the stack names them.
    public var factors: [String] {
        var seen: [String] = []
        for f in auth.compactMap(\.factor) where !seen.contains(f) { seen.append(f) }
        return seen
    }

    public static let factorOfModule: [String: String] = [
        "pam_fprintd": "fingerprint",
        "pam_u2f": "security key",
        "pam_unix": "password", "pam_sss": "password", "pam_ldap": "password", "pam_krb5": "password",
        "pam_winbind": "password", "pam_userdb": "password", "pam_pwdfile": "password", "pam_matrix": "password",
    ]

    /// The stack of `service`, from the first of `directories` that has it (libpam's order), or of `other`.
    public static func read(service: String = PAMGate.service, directories: [String] = ["/etc/pam.d", "/usr/lib/pam.d"]) -> PAMStack? {
        for name in [service, "other"] {
            for d in directories where access("\(d)/\(name)", F_OK) == 0 {
                var auth: [Entry] = []
                collect("\(d)/\(name)", directories: directories, depth: 0, into: &auth)
                return PAMStack(file: "\(d)/\(name)", auth: auth)
            }
        }
        return nil
    }

    static func collect(_ path: String, directories: [String], depth: Int, into auth: inout [Entry]) {
        guard depth < 8, let bytes = try? PolicyFileReader.read(path, maximumCount: 64 * 1024) else { return }
        let text = String(decoding: bytes, as: UTF8.self).replacingBackslashNewlines()
        for raw in text.split(separator: "\n") {
            let line = raw.prefix { $0 != "#" }
            let words = fields(String(line))
            guard let first = words.first else { continue }
            if first == "@include" {
                if words.count > 1 { collect(resolve(words[1], in: directories), directories: directories, depth: depth + 1, into: &auth) }
                continue
            }
            let type = first.hasPrefix("-") ? String(first.dropFirst()) : first
            guard type.lowercased() == "auth", words.count >= 3 else { continue }
            let control = words[1]
            if control == "include" || control == "substack" {
                collect(resolve(words[2], in: directories), directories: directories, depth: depth + 1, into: &auth)
                continue
            }
            var module = String(words[2].split(separator: "/").last ?? "")
            if module.hasSuffix(".so") { module.removeLast(3) }
            auth.append(Entry(control: control, module: module, factor: factorOfModule[module]))
        }
    }

    /// A relative name is looked up as libpam does: beside the service files.
    static func resolve(_ name: String, in directories: [String]) -> String {
        if name.hasPrefix("/") { return name }
        return directories.map { "\($0)/\(name)" }.first { access($0, F_OK) == 0 } ?? "\(directories[0])/\(name)"
    }

    /// The line's words; a `[ ... ]` control is one word, its spaces as one.
    static func fields(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var bracket = false
        for c in line {
            if c == "[" && current.isEmpty { bracket = true }
            if bracket {
                // Spaces inside the brackets as one (a continued line leaves several).
                if c == " " || c == "\t" || c == "\r" {
                    if current.last != " " { current.append(" ") }
                    continue
                }
                current.append(c)
                if c == "]" { bracket = false; words.append(current); current = "" }
            } else if c == " " || c == "\t" || c == "\r" {
                if !current.isEmpty { words.append(current); current = "" }
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// One sentence: which factors the file names, and how (the controls as written).
    public var sentence: String {
        guard !auth.isEmpty else { return "The PAM stack (\(file)) names no authentication module, so libpam lets nobody in." }
        let named = auth.filter { $0.factor != nil }.map { "\($0.factor!) (\($0.module), \($0.control))" }
        if named.isEmpty {
            return "The PAM stack (\(file)) names no password, fingerprint or security-key module vaultctl knows: \(auth.map(\.module).joined(separator: ", "))."
        }
        return "Reads are authenticated by the PAM stack \(file), which names: \(named.joined(separator: "; "))."
    }

    public var json: String {
        let entries = auth.map { e in
            "{\"module\":\(Self.quoted(e.module)),\"control\":\(Self.quoted(e.control)),\"factor\":\(e.factor.map(Self.quoted) ?? "null")}"
        }
        return "{\"file\":\(Self.quoted(file)),\"factors\":[\(factors.map(Self.quoted).joined(separator: ","))],\"auth\":[\(entries.joined(separator: ","))]}"
    }

    static func quoted(_ s: String) -> String { JSONEscaping.quoted(s) }
}

extension String {
    /// Joins lines continued with a backslash at their end.
    fileprivate func replacingBackslashNewlines() -> String {
        var out = ""
        var pendingBackslash = false
        for c in self {
            if pendingBackslash {
                pendingBackslash = false
                if c == "\n" { out.append(" "); continue }
                out.append("\\")
            }
            if c == "\\" { pendingBackslash = true } else { out.append(c) }
        }
        if pendingBackslash { out.append("\\") }
        return out
    }
}
