#if canImport(Glibc)
import Glibc
#endif
import JSON
import GateProtocol
import Slots
import VaultRules

/// The small record of which slot each secret went to: `<config>/modes.json`.
///
/// It lives with the user's config, so it can come back from a backup on a machine whose device slot is
/// empty. That is why nothing trusts it alone: `Vault` asks the slots themselves. Updates are
/// read-modify-write under an exclusive `flock` on `<config>/.modes.lock`, then written atomically.
public struct ModeRecord: Sendable {
    public let folder: String
    var path: String { "\(folder)/modes.json" }

    public init(folder: String) {
        self.folder = folder
    }

    /// The file's contents: `{"version": 1, "slots": {"NAME": "device"|"sync"|"fleet", …}}`. The fleet came
    /// without a new version: an older vaultctl reads such an entry as unreadable, answers none (66) when no
    /// other slot holds a copy, and serves a copy that one other slot holds (a leftover of an interrupted move
    /// or store) as the value. So a move or store into the fleet must leave no copy outside it (F5).
    struct Document: JSONDocument {
        var version: Int
        var slots: [String: SlotMode]

        init(version: Int, slots: [String: SlotMode]) {
            self.version = version
            self.slots = slots
        }

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the mode record")
            version = try fields.required("version", \.intValue)
            slots = try fields.required("slots") { $0.dictionary { $0.stringValue.flatMap(SlotMode.init(rawValue:)) } }
        }

        package var json: JSONValue {
            .object(["version": .integer(version), "slots": .object(slots.mapValues { .string($0.rawValue) })])
        }
    }

    /// The recorded modes; empty when there is no record yet.
    public func load() throws(VaultError) -> [SlotName: SlotMode] {
        return try VaultError.inFile(path) {
            guard try SecureFile.privateFolderExists(folder),
                  let bytes = try SecureFile.readPublic(path, maximumCount: 4 * 1024 * 1024) else { return [:] }
            return try decode(bytes)
        }
    }

    /// What the record says of one slot, for finding its value.
    public enum Lookup: Equatable, Sendable {
        /// The record names this slot's mode.
        case recorded(SlotMode)
        /// There is no record, or it has no entry for this slot.
        case absent
        /// There is a record, but it cannot be read (not JSON, another version, a bad mode for this slot, an
        /// I/O error): not the same as no record, since it may name the slot. `detail` says why.
        case unreadable(detail: String)

        /// The recorded mode, nil when the record names none (absent or unreadable).
        public var mode: SlotMode? {
            if case .recorded(let m) = self { return m }
            return nil
        }
    }

    /// What the record says of `name`: a record that others could have written (loose permissions, a
    /// symlink) is refused outright, as every such file is.
    ///
    /// Reads and status need one entry of a record that names every slot, so this one is looked up without
    /// building the document (`JSONParser.values(at:in:)`: the whole text is still checked). It differs from
    /// `mode(of:)` only on records that are invalid anyway, in ways that do not touch this entry (a duplicate
    /// or a bad mode under another name): this gives the entry, `mode(of:)` refuses the record.
    public func lookup(_ name: SlotName) throws(VaultError) -> Lookup {
        let bytes: [UInt8]
        do throws(SlotError) {
            guard try SecureFile.privateFolderExists(folder),
                  let read = try SecureFile.readPublic(path, maximumCount: 4 * 1024 * 1024) else { return .absent }
            bytes = read
        } catch {
            if case .unsafePermissions = error { throw .slot(error) }
            return .unreadable(detail: SlotErrorText.describe(error))
        }
        guard let found = try? JSONParser.values(at: [["version"], ["slots", name.rawValue]], in: bytes) else {
            return .unreadable(detail: "it is not a valid mode record")
        }
        guard found[0]?.intValue == 1 else { return .unreadable(detail: "its version is not one this vaultctl reads") }
        guard let entry = found[1] else { return .absent }
        guard let mode = entry.stringValue.flatMap(SlotMode.init(rawValue:)) else {
            return .unreadable(detail: "its entry for '\(name)' is not \"device\", \"sync\" or \"fleet\"")
        }
        return .recorded(mode)
    }

    /// The record's path, for messages.
    public var filePath: String { path }

    /// The recorded mode of one slot.
    public func mode(of name: SlotName) throws(VaultError) -> SlotMode? {
        try load()[name]
    }

    /// Takes the record's lock and gives it back: a change finds a lock file that is unsafe, or held too
    /// long by another process, before it writes anything to a slot.
    public func checkLock() throws(VaultError) {
        do throws(SlotError) { try SecureFile.ensurePrivateFolder(folder) } catch { throw .slot(error) }
        try FileLock(path: "\(folder)/.modes.lock").release()
    }

    /// Sets (or with nil, removes) the recorded mode of `name`.
    public func set(_ name: SlotName, _ mode: SlotMode?) throws(VaultError) {
        try VaultError.inFile(path) {
            try SecureFile.ensurePrivateFolder(folder)
            let lock = try FileLock(path: "\(folder)/.modes.lock")
            defer { lock.release() }
            var modes: [SlotName: SlotMode] = [:]
            if let bytes = try SecureFile.readPublic(path, maximumCount: 4 * 1024 * 1024) {
                modes = try decode(bytes)
            }
            if modes[name] == mode { return }
            modes[name] = mode
            var doc = Document(version: 1, slots: [:])
            for (k, v) in modes { doc.slots[k.rawValue] = v }
            try SecureFile.write(path, JSONWriter.bytes(doc.json, style: .pretty))
        }
    }

    private func decode(_ bytes: [UInt8]) throws(VaultError) -> [SlotName: SlotMode] {
        guard let doc = try? Document(jsonBytes: bytes) else {
            throw .configuration(path: path, detail: "it is not a valid mode record; fix it or remove it (the slots keep their values)")
        }
        guard doc.version == 1 else {
            throw .configuration(path: path, detail: "its version \(doc.version) is not one this vaultctl reads")
        }
        var out: [SlotName: SlotMode] = [:]
        for (k, v) in doc.slots {
            if let name = SlotName(k) { out[name] = v }
        }
        return out
    }
}
