import Slots

/// A small private JSON document in one of vaultctl's folders, read and updated under an exclusive `flock`
/// and written atomically, as compact JSON with sorted keys. Used for the rate limit and the supply permissions.
struct StateFile<Document: JSONDocument>: Sendable {
    let folder: String
    let name: String
    let empty: Document

    var path: String { "\(folder)/\(name)" }

    /// The document, or `empty` when there is none.
    func load() throws(VaultError) -> Document {
        do {
            guard try SecureFile.privateFolderExists(folder),
                  let bytes = try SecureFile.readPublic(path, maximumCount: 1024 * 1024) else { return empty }
            return try decode(bytes)
        } catch let e as SlotError {
            throw .slot(e)
        } catch let e as VaultError {
            throw e
        } catch {
            throw .configuration(path: path, detail: "\(error)")
        }
    }

    /// Reads, changes and writes the document while holding the lock, so concurrent processes lose nothing.
    /// An unchanged document is not written again; a changed one is flushed to disk only when `durable` says
    /// the change must survive a power cut.
    @discardableResult
    func update<R>(durable: (_ before: Document, _ after: Document) -> Bool = { _, _ in true },
                   _ change: (inout Document) -> R) throws(VaultError) -> R {
        do {
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
            let result = change(&doc)
            let text = JSONWriter.bytes(doc.json)
            if existed && text == JSONWriter.bytes(before.json) { return result }
            try SecureFile.write(path, text, durable: durable(before, doc))
            return result
        } catch let e as SlotError {
            throw .slot(e)
        } catch let e as VaultError {
            throw e
        } catch {
            throw .configuration(path: path, detail: "\(error)")
        }
    }

    private func decode(_ bytes: [UInt8]) throws(VaultError) -> Document {
        guard let doc = try? bytes.withUnsafeBytes({ (raw) throws(JSONError) in try Document(jsonBytes: raw) }) else {
            throw .configuration(path: path, detail: "it is damaged; remove it (vaultctl starts it afresh)")
        }
        return doc
    }
}
