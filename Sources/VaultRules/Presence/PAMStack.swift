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
/// written), a module it does not know names no factor, and a file it cannot read makes the answer "not
/// known". libpam has no interface that parses its configuration for a program, so this reads the lines as
/// libpam assembles them: the comment cut first (from `#`), trailing blanks dropped, then a `\` at the end
/// joins the next line; `TYPE CONTROL MODULE [ARGS]`, `-TYPE`, `[value=action ...]` controls, `@include
/// FILE`; a service with no auth line authenticates with `other`'s. At most 8 levels of inclusion, 64 KiB a file.
public struct PAMStack: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public let control: String
        public let module: String
        public let factor: String?
        /// The module's arguments as written (`authfile=/etc/vaultctl/u2f_mappings`, `cue`).
        public var arguments: [String] = []
    }

    /// The service file read (`/etc/pam.d/vaultctl`, else `/usr/lib/pam.d/vaultctl`, else `other`'s).
    public let file: String
    public let auth: [Entry]
    /// Where the auth lines come from when not from `file`: libpam uses `other`'s when the service has none.
    public var authFrom: String? = nil
    /// Files named (the service's, an inclusion) that could not be read: what they hold is not known here.
    public var unreadable: [String] = []

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
        func find(_ name: String) -> String? { directories.map { "\($0)/\(name)" }.first { access($0, F_OK) == 0 } }
        guard let file = find(service) ?? find("other") else { return nil }
        var auth: [Entry] = []
        var unreadable: [String] = []
        collect(file, directories: directories, depth: 0, into: &auth, unreadable: &unreadable)
        var stack = PAMStack(file: file, auth: auth)
        // A service with no auth line: libpam authenticates with `other`'s.
        if auth.isEmpty, unreadable.isEmpty, let other = find("other"), other != file {
            var otherAuth: [Entry] = []
            collect(other, directories: directories, depth: 0, into: &otherAuth, unreadable: &unreadable)
            stack = PAMStack(file: file, auth: otherAuth, authFrom: other)
        }
        stack.unreadable = unreadable
        return stack
    }

    /// The lines as libpam assembles them.
    static func logicalLines(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for physical in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(physical.prefix { $0 != "#" })
            while let last = line.last, last == " " || last == "\t" || last == "\r" { line.removeLast() }
            if line.hasSuffix("\\") {
                line.removeLast()
                current += line + " "
                continue
            }
            lines.append(current + line)
            current = ""
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    static func collect(_ path: String, directories: [String], depth: Int, into auth: inout [Entry], unreadable: inout [String]) {
        guard depth < 8 else { return }
        guard let bytes = try? PolicyFileReader.read(path, maximumCount: 64 * 1024), bytes.count <= 64 * 1024 else {
            unreadable.append(path)
            return
        }
        for line in logicalLines(String(decoding: bytes, as: UTF8.self)) {
            let words = fields(line)
            guard let first = words.first else { continue }
            if first == "@include" {
                if words.count > 1 {
                    collect(resolve(words[1], in: directories), directories: directories, depth: depth + 1, into: &auth, unreadable: &unreadable)
                }
                continue
            }
            let type = first.hasPrefix("-") ? String(first.dropFirst()) : first
            guard type.lowercased() == "auth", words.count >= 3 else { continue }
            let control = words[1]
            if control.lowercased() == "include" || control.lowercased() == "substack" {
                collect(resolve(words[2], in: directories), directories: directories, depth: depth + 1, into: &auth, unreadable: &unreadable)
                continue
            }
            var module = String(words[2].split(separator: "/").last ?? "")
            if module.hasSuffix(".so") { module.removeLast(3) }
            auth.append(Entry(control: control, module: module, factor: factorOfModule[module], arguments: Array(words.dropFirst(3))))
        }
    }

    /// The root-owned key mappings file the shipped security-key stacks name (`pam_u2f authfile=`).
    public static let keyMappingsFile = "/etc/vaultctl/u2f_mappings"

    /// `keyMappingsFile` when an auth line names `pam_u2f` with it as its `authfile=` and it does not exist:
    /// pam_u2f then knows no key for anyone and gives up as it does for a missing key.
    public func missingKeyMappings(exists: (String) -> Bool = { access($0, F_OK) == 0 }) -> String? {
        let named = auth.contains { $0.module == "pam_u2f" && $0.arguments.contains("authfile=\(Self.keyMappingsFile)") }
        return named && !exists(Self.keyMappingsFile) ? Self.keyMappingsFile : nil
    }

    /// What to do about a missing `keyMappingsFile`, for `user`.
    public static func keyMappingsRemedy(user: String) -> String {
        "the PAM stack asks for a security key from \(keyMappingsFile) (pam_u2f), and that file is missing, so no key is enrolled for anyone: enrol yours as root with the key plugged in, sudo sh -c 'pamu2fcfg -u \(user) >> \(keyMappingsFile)' (Debian: pamu2fcfg; touch the key when it blinks), or put the password stack back with \(Installation.current.pamStackCommand("password"))"
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
}
