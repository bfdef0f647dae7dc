import JSON
import GateProtocol
import Slots
import VaultRules

/// The receiver's targets: `<config>/targets.json`, `{"version": 1, "targets": {"NAME": {"check": TEXT,
/// "command": [TEXT, …]}, …}}` (`check` left out when there is none).
///
/// Read strictly, as the policy is: an unknown version, an unknown key at any level or a value of the wrong
/// kind rejects the whole document (78), naming the key, so a typo can never make a target run without its
/// lock check. Private like every file of vaultctl's (0600 in a 0700 folder, owned by the user, refused
/// when looser), changed under a lock and written atomically.
public struct TargetList: Sendable {
    public let folder: String
    public static let fileName = "targets.json"
    static let version = 1
    static let topKeys = ["targets", "version"]
    static let targetKeys = ["check", "command"]
    static let maximumDocumentSize = 64 * 1024

    public init(configFolder: String) {
        folder = configFolder
    }

    public var path: String { "\(folder)/\(TargetList.fileName)" }

    /// Every target, sorted by name; none when there is no file.
    public func all() throws(VaultError) -> [Target] {
        let bytes: [UInt8]?
        do throws(SlotError) {
            guard try SecureFile.privateFolderExists(folder) else { return [] }
            bytes = try SecureFile.readPublic(path, maximumCount: TargetList.maximumDocumentSize)
        } catch {
            throw TargetList.readFailure(error, path)
        }
        guard let bytes else { return [] }
        return try TargetList.parse(bytes, path: path)
    }

    /// The target `name`, or nil.
    public func named(_ name: String) throws(VaultError) -> Target? {
        try all().first { $0.name == name }
    }

    /// Adds a target; an existing one of that name is refused (65), so replacing one is a deliberate remove first.
    public func add(_ target: Target) throws(VaultError) {
        try update { (targets) throws(VaultError) in
            if targets.contains(where: { $0.name == target.name }) {
                throw .badInput("target '\(target.name)' exists already; remove it first ('vaultctl target remove \(target.name)') to replace it; nothing was changed")
            }
            targets.append(target)
        }
    }

    /// Removes a target; false when there was none of that name.
    public func remove(_ name: String) throws(VaultError) -> Bool {
        var found = false
        try update { (targets) throws(VaultError) in
            found = targets.contains { $0.name == name }
            targets.removeAll { $0.name == name }
        }
        return found
    }

    private func update(_ change: (inout [Target]) throws(VaultError) -> Void) throws(VaultError) {
        do throws(SlotError) { try SecureFile.ensurePrivateFolder(folder) } catch { throw .slot(error) }
        let lock = try FileLock(path: "\(folder)/.\(TargetList.fileName).lock")
        defer { lock.release() }
        var targets = try all()
        try change(&targets)
        do throws(SlotError) { try SecureFile.write(path, TargetList.document(targets)) } catch { throw .slot(error) }
    }

    static func readFailure(_ error: SlotError, _ path: String) -> VaultError {
        if case .tampered = error {  // SecureFile's only `tampered` from a read: the file is too large
            return .configuration(path: path, detail: "it is larger than 64 KiB, more than any list of targets needs")
        }
        return .slot(error)
    }

    /// The document's bytes (pretty, sorted keys, so a person can read and diff it).
    static func document(_ targets: [Target]) -> [UInt8] {
        var members: [String: JSONValue] = [:]
        for t in targets {
            members[t.name] = .object(dropping: ["check": t.check.map(JSONValue.string),
                                                  "command": .array(t.command.map(JSONValue.string))])
        }
        return JSONWriter.bytes(.object(["version": .integer(version), "targets": .object(members)]), style: .pretty) + [0x0A]
    }

    /// Reads a whole document strictly; throws `.configuration` naming the first problem.
    static func parse(_ bytes: [UInt8], path: String) throws(VaultError) -> [Target] {
        func problem(_ detail: String) -> VaultError { .configuration(path: path, detail: detail) }
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw problem(error.description) }
        guard case .object(let top) = value else { throw problem("the document must be a JSON object such as {\"version\": 1, \"targets\": {}}, not \(value.kind)") }
        guard case .integer(let v)? = top["version"] else {
            throw problem("\"version\" is missing or not a number; add \"version\": \(version)")
        }
        guard v == version else { throw problem("version \(v) is not one this vaultctl reads (it reads version \(version))") }
        try rejectUnknown(top, known: topKeys, at: "", problem)
        guard let listed = top["targets"] else { throw problem("\"targets\" is missing; add \"targets\": {}") }
        guard case .object(let entries) = listed else { throw problem("\"targets\" must be an object, not \(listed.kind)") }
        var out: [Target] = []
        for name in entries.keys.sorted() {
            let at = "targets.\(name)"
            guard Target.isValidName(name) else { throw problem("\(PolicyParser.quoted(at)) is not a valid target name: \(Target.nameRule)") }
            guard case .object(let fields) = entries[name]! else { throw problem("\"\(at)\" must be an object, not \(entries[name]!.kind)") }
            try rejectUnknown(fields, known: targetKeys, at: at, problem)
            var check: String?
            if let c = fields["check"] {
                guard case .string(let text) = c, !text.isEmpty else { throw problem("\"\(at).check\" must be a non-empty string (a shell command line)") }
                check = text
            }
            guard case .array(let words)? = fields["command"], !words.isEmpty else {
                throw problem("\"\(at).command\" must be a non-empty array of strings (the program, then its arguments)")
            }
            var command: [String] = []
            for word in words {
                guard case .string(let w) = word, !w.isEmpty || !command.isEmpty else {
                    throw problem("\"\(at).command\" must be a non-empty array of strings (the program, then its arguments)")
                }
                command.append(w)
            }
            out.append(Target(name: name, check: check, command: command))
        }
        return out
    }

    private static func rejectUnknown(_ members: [String: JSONValue], known: [String], at parent: String,
                                      _ problem: (String) -> VaultError) throws(VaultError) {
        guard let unknown = members.keys.filter({ !known.contains($0) }).sorted().first else { return }
        let keyPath = parent.isEmpty ? unknown : "\(parent).\(unknown)"
        throw problem("unknown key \(PolicyParser.quoted(keyPath)); remove it or fix its spelling (this vaultctl knows: \(known.joined(separator: ", ")))")
    }
}
