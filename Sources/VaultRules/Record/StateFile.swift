import JSON
import Slots

/// A small private JSON document in one of vaultctl's folders, read and updated under an exclusive `flock`
/// and written atomically, as compact JSON with sorted keys. Used for the rate limit and the supply permissions.
package struct StateFile<Document: JSONDocument>: Sendable {
    package let folder: String
    package let name: String
    package let empty: Document

    package var path: String { "\(folder)/\(name)" }

    package init(folder: String, name: String, empty: Document) {
        self.folder = folder
        self.name = name
        self.empty = empty
    }

    /// The document, or `empty` when there is none.
    package func load() throws(VaultError) -> Document {
        return try VaultError.inFile(path) {
            guard try SecureFile.privateFolderExists(folder),
                  let bytes = try SecureFile.readPublic(path, maximumCount: 1024 * 1024) else { return empty }
            return try decode(bytes)
        }
    }

    /// Reads, changes and writes the document while holding the lock, so concurrent processes lose nothing;
    /// then runs `committed`, still under the lock (its error is thrown after the document is written). An
    /// unchanged document is not written again; a `change` that throws writes nothing and commits nothing.
    @discardableResult
    package func update<R>(_ change: (inout Document) throws(SlotError) -> R,
                   committed: () throws(SlotError) -> Void = {}) throws(VaultError) -> R {
        return try VaultError.inFile(path) {
            try SecureFile.ensurePrivateFolder(folder)
            let lock = try FileLock(path: "\(folder)/.\(name).lock")
            defer { lock.release() }
            var doc = empty
            var existed = false
            if let bytes = try SecureFile.readPublic(path, maximumCount: 1024 * 1024) {
                doc = try decode(bytes)
                existed = true
            }
            let before = doc
            let result = try change(&doc)
            let text = JSONWriter.bytes(doc.json)
            if !existed || text != JSONWriter.bytes(before.json) { try SecureFile.write(path, text) }
            try committed()
            return result
        }
    }

    private func decode(_ bytes: [UInt8]) throws(VaultError) -> Document {
        guard let doc = try? Document(jsonBytes: bytes) else {
            throw .configuration(path: path, detail: "it is damaged; remove it (vaultctl starts it afresh)")
        }
        return doc
    }
}
