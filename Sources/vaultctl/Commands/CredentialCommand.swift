#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl credential get|store|erase`: git's credential helper protocol over the vault. `get` is a gated
/// read and prints only `username` and `password`; `store` keeps git's password in the credential's slot
/// when it is empty (never over a value);
/// `erase` deletes it only when it holds the password git rejected (a comparison that reads the value, so
/// it asks PAM first, as `get` does).
enum CredentialCommand {
    static func get(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let request = try readRequest()
        guard let scheme = request.scheme, let host = request.host else { return }
        let vault = try context.vault()
        guard let (name, username) = try pick(scheme: scheme, host: host, username: request.username, vault) else {
            // Nothing stored: an empty answer, so git asks the next helper; the log says nothing was given.
            context.auditedResult = "nothing-stored"
            context.auditedSubject = "no credential stored for \(scheme)://\(host)"
            return
        }
        context.auditedSlot = name
        let secret: SecretBytes
        do { secret = try vault.read(name) } catch {
            if case .slot(.empty) = error {
                context.auditedResult = "nothing-stored"
                return
            }
            throw ErrorReport.failure(error)
        }
        let answer = try answerText(username: username, password: secret, slot: name)
        // The audit line goes out before the password does: one that cannot be written stops it.
        try context.recordDisclosure("ok")
        guard answer.withUnsafeBytes({ Output.writeAll(1, $0) }) else {
            throw CommandFailure(code: .failure, message: "Failed to write the credential to standard output.")
        }
    }

    static func store(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let request = try readRequest()
        guard let scheme = request.scheme, let host = request.host, let password = request.password,
              !password.isEmpty else {
            return  // git always sends these; without them there is nothing to keep
        }
        let name = try slotName(scheme: scheme, host: host, username: request.username)
        context.auditedSlot = name
        let mode = SlotMode(rawValue: args.options["mode"] ?? "device")!
        let vault = try context.vault()
        // git runs this after every successful use, with the password the remote just accepted: it fills an
        // empty slot and never replaces a value (which would need a password: a store over a value). A
        // password that changed reaches the slot through git's reject (erase, gated), then this store.
        do {
            if let warning = try vault.store(name, password, mode: mode, expectingEmpty: true).warning {
                Output.message("warning: \(warning)")
            }
        } catch {
            if case .changedMeanwhile = error {
                context.auditedResult = "kept"
                context.auditedSubject = "a value is stored already; credential store never replaces one"
                return
            }
            throw ErrorReport.failure(error)
        }
    }

    static func erase(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let request = try readRequest()
        guard let scheme = request.scheme, let host = request.host else { return }
        let vault = try context.vault()
        let names: [SlotName]
        if let username = request.username, !username.isEmpty {
            names = [try slotName(scheme: scheme, host: host, username: username)]
        } else {
            names = try candidates(scheme: scheme, host: host, vault).map(\.name)
        }
        context.auditedSlot = names.first
        // git sends the rejected password with every erase; without one there is nothing to compare, and
        // erasing every user's credential for the host is not what a reject asks for.
        guard request.password != nil else {
            context.auditedResult = "kept"
            context.auditedSubject = "git sent no password to compare, so nothing was erased"
            return
        }
        do {
            // One line for each slot it compared: "erased", or "kept" (it held another password); written
            // as each is done, so a failure at a later slot leaves the earlier ones logged too.
            let (touched, _) = try vault.eraseCredential(names, matching: request.password) { name, erased in
                context.auditedSlots.append((name, erased ? "erased" : "kept"))
            }
            if touched.isEmpty {
                context.auditedResult = "kept"
                context.auditedSubject = "no credential stored for it"
            }
        } catch {
            throw ErrorReport.failure(error)
        }
    }

    /// git's description from standard input, which must not be a terminal: the helper is run by git.
    static func readRequest() throws(CommandFailure) -> GitCredential {
        if Terminal.isTerminal(0) {
            throw .usage("'credential' reads git's credential description from standard input; git runs it (git config --global credential.helper vaultctl).")
        }
        do { return try GitCredential.read(fd: 0) } catch {
            switch error {
            case .lineTooLong, .tooManyLines:
                throw CommandFailure(code: .dataError, message: "git's credential description is too long (a line over 64 KiB, or over 1000 lines); nothing was done.")
            case .failed(let e):
                throw CommandFailure(code: .failure, message: "Failed to read git's credential description from standard input (error \(e)).")
            }
        }
    }

    static func slotName(scheme: String, host: String, username: String?) throws(CommandFailure) -> SlotName {
        guard let name = CredentialSlotName.name(scheme: scheme, host: host, username: username) else {
            throw CommandFailure(code: .dataError, message: "The credential for \(scheme)://\(host) makes a slot name longer than 128 characters; nothing was done.")
        }
        return name
    }

    /// The slot to answer from and the username to give: the one git named, else the slot without a user,
    /// else the first user stored for that protocol and host (names only, never a value).
    static func pick(scheme: String, host: String, username: String?, _ vault: Vault) throws(CommandFailure) -> (SlotName, String?)? {
        if let username, !username.isEmpty {
            return (try slotName(scheme: scheme, host: host, username: username), username)
        }
        let found = try candidates(scheme: scheme, host: host, vault)
        if let bare = found.first(where: { $0.username == nil }) { return (bare.name, nil) }
        return found.first.map { ($0.name, $0.username) }
    }

    /// The credential slots listed for a protocol and host (a sync slot that cannot be listed is left out).
    static func candidates(scheme: String, host: String, _ vault: Vault) throws(CommandFailure) -> [(name: SlotName, username: String?)] {
        let entries: [Vault.Entry]
        do { entries = try vault.list().entries } catch { throw ErrorReport.failure(error) }
        var out: [(name: SlotName, username: String?)] = []
        for e in entries where !out.contains(where: { $0.name == e.name }) {
            guard let parts = CredentialSlotName.parts(of: e.name), parts.scheme == scheme, parts.host == host else { continue }
            out.append((e.name, parts.username))
        }
        return out
    }

    /// `username=…` (when known) and `password=…` lines, built in `SecretBytes`. A value that ends in one
    /// newline (as `echo … | vaultctl store` leaves it) is given without it; a newline or NUL elsewhere
    /// cannot travel in git's protocol and is refused.
    static func answerText(username: String?, password: SecretBytes, slot: SlotName) throws(CommandFailure) -> SecretBytes {
        var length = password.count
        let bad: Bool = password.withUnsafeBytes { raw in
            if length > 0 && raw[length - 1] == 0x0A { length -= 1 }
            return raw[..<length].contains(0x0A) || raw[..<length].contains(0)
        }
        if bad || length == 0 {
            throw CommandFailure(code: .dataError, message: "Slot '\(slot)' holds a value git's credential protocol cannot carry (empty, or a newline or NUL byte inside); store the password alone.")
        }
        var head = ""
        if let username { head += "username=\(username)\n" }
        head += "password="
        let out = SecretBytes(capacity: head.utf8.count + length + 1)
        var ok = Array(head.utf8).withUnsafeBytes { out.append($0) }
        ok = ok && password.withUnsafeBytes { out.append(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
        var newline: UInt8 = 0x0A
        ok = ok && withUnsafeBytes(of: &newline) { out.append($0) }
        guard ok else { throw CommandFailure(code: .failure, message: "The credential answer did not fit its buffer.") }
        return out
    }
}
