import Slots

extension VaultError {
    /// Runs work on one of vaultctl's files (a record, a state document, the audit log) and throws what went
    /// wrong as the vault error it is: a slot error (the file's own checks) as `.slot`, a vault error as it
    /// is, and anything else (a parser's) as a configuration problem of `path`. One mapping for every such
    /// file, so the CLI's and the gate's cannot word the same failure differently.
    package static func inFile<R>(_ path: String, _ body: () throws -> R) throws(VaultError) -> R {
        do {
            return try body()
        } catch let e as SlotError {
            throw .slot(e)
        } catch let e as VaultError {
            throw e
        } catch {
            throw .configuration(path: path, detail: "\(error)")
        }
    }
}
