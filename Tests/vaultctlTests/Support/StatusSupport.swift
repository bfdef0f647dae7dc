#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// One `vaultctl status SLOT --json` (or `recovery status --json`) document, checked field by field.
struct StatusDocument: CustomStringConvertible {
    let slot: String
    let state: String
    /// nil when the document says `"mode":null`.
    let mode: String?
    let message: String
    /// The first sentence of `message`: the one the text form puts after the state.
    let summary: String
    /// Only `recovery status`: the `copied` field (`.some(nil)` for JSON null); nil when absent.
    let copied: Bool??
    /// `"binding"`: `tpm2` or `machine-id` for a device-slot value; nil for JSON null or when absent.
    let binding: String?
    let keys: Set<String>
    let text: String

    var description: String { text }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses one JSON object; every field the issue names must be there with the right type.
    static func parse(_ bytes: [UInt8]) throws -> StatusDocument {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)),
              let dict = object as? [String: Any] else {
            throw Invalid(description: "not a JSON object: \(text.debugDescription)")
        }
        guard let slot = dict["slot"] as? String else { throw Invalid(description: "no string 'slot' in \(text)") }
        guard let state = dict["state"] as? String else { throw Invalid(description: "no string 'state' in \(text)") }
        guard let message = dict["message"] as? String else { throw Invalid(description: "no string 'message' in \(text)") }
        guard let summary = dict["summary"] as? String, message.hasPrefix(summary) else {
            throw Invalid(description: "no string 'summary' that begins 'message' in \(text)")
        }
        guard let rawMode = dict["mode"] else { throw Invalid(description: "no 'mode' key in \(text)") }
        let mode: String?
        if rawMode is NSNull {
            mode = nil
        } else if let m = rawMode as? String {
            mode = m
        } else {
            throw Invalid(description: "'mode' is neither a string nor null in \(text)")
        }
        var copied: Bool??
        if let rawCopied = dict["copied"] {
            if rawCopied is NSNull {
                copied = .some(nil)
            } else if String(describing: type(of: rawCopied)).contains("Bool"), let b = rawCopied as? Bool {
                // JSON true/false come back as a boolean type; a number 0/1 would not.
                copied = .some(b)
            } else {
                throw Invalid(description: "'copied' is neither a boolean nor null in \(text)")
            }
        }
        return StatusDocument(slot: slot, state: state, mode: mode, message: message, summary: summary, copied: copied,
                              binding: dict["binding"] as? String, keys: Set(dict.keys), text: text)
    }
}

extension Sandbox {
    /// The environment of a command that must need neither PAM nor a password: no pam_wrapper variables
    /// (`LD_PRELOAD`, `PAM_WRAPPER`, `PAM_WRAPPER_SERVICE_DIR`) and no `VAULT_ASKPASS`. The runner gives the
    /// child no terminal either, so any attempt to prompt or authenticate would fail.
    func environmentWithoutPAM() -> [String: String] {
        var env = Fixtures.baseEnvironment
        env["HOME"] = home
        env["XDG_STATE_HOME"] = stateHome
        env["XDG_CONFIG_HOME"] = configHome
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        // No TPM unless a test gives one (a machine with /dev/tpmrm0 must not change what other tests see).
        env["VAULTCTL_TPM2_TCTI"] = "none"
        return env
    }

    /// Runs `vaultctl ARGS` with `environmentWithoutPAM()` (plus `overriding`).
    func vaultctlWithoutPAM(_ args: [String], overriding: [String: String] = [:],
                            sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        let env = environmentWithoutPAM().merging(overriding) { $1 }
        return ProcessRunner.run(Paths.vaultctl, args, environment: env, sourceLocation: sourceLocation)
    }

    /// `vaultctl status NAME --json` without PAM or askpass; requires exit 0, one line of JSON and no stderr.
    func status(_ name: String, overriding: [String: String] = [:],
                sourceLocation: SourceLocation = #_sourceLocation) throws -> StatusDocument {
        try jsonStatus(["status", name, "--json"], overriding: overriding, sourceLocation: sourceLocation)
    }

    /// `vaultctl recovery status --json` without PAM or askpass.
    func recoveryStatus(sourceLocation: SourceLocation = #_sourceLocation) throws -> StatusDocument {
        try jsonStatus(["recovery", "status", "--json"], sourceLocation: sourceLocation)
    }

    private func jsonStatus(_ args: [String], overriding: [String: String] = [:],
                            sourceLocation: SourceLocation) throws -> StatusDocument {
        let r = vaultctlWithoutPAM(args, overriding: overriding, sourceLocation: sourceLocation)
        try #require(r.status == 0, "\(args.joined(separator: " ")) failed: \(r)", sourceLocation: sourceLocation)
        #expect(r.stderr.isEmpty, "\(args.joined(separator: " ")) wrote to stderr: \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stdout.last == 0x0a && r.stdout.filter { $0 == 0x0a }.count == 1,
                "one line of JSON expected: \(r.stdoutText.debugDescription)", sourceLocation: sourceLocation)
        return try StatusDocument.parse(r.stdout)
    }

    /// Copies `folder` (with its modes and times) into `destination`, which must exist: `cp -a`.
    static func copyFolder(_ folder: String, into destination: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = ProcessRunner.run(Paths.tool("cp"), ["-a", folder, "\(destination)/"],
                                  environment: Fixtures.baseEnvironment, sourceLocation: sourceLocation)
        try #require(r.status == 0, "cp -a \(folder) \(destination)/ failed: \(r)", sourceLocation: sourceLocation)
    }

    /// Every regular file under `folder`, recursively (hidden ones too).
    static func filesUnder(_ folder: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var out: [String] = []
        while let relative = walker.nextObject() as? String {
            let path = "\(folder)/\(relative)"
            var st = stat()
            if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { out.append(path) }
        }
        return out
    }
}

extension SecretServiceInstance {
    /// The `Label` of the collection the `default` alias points at (`Login` for gnome-keyring's login
    /// collection), asked with gdbus.
    func defaultCollectionLabel() throws -> String {
        let alias = ProcessRunner.run(Paths.tool("gdbus"), [
            "call", "--session", "--dest", "org.freedesktop.secrets",
            "--object-path", "/org/freedesktop/secrets",
            "--method", "org.freedesktop.Secret.Service.ReadAlias", "default",
        ], environment: clientEnvironment, timeout: .seconds(15))
        // (objectpath '/org/freedesktop/secrets/collection/login',)
        let aliasText = alias.stdoutText
        guard alias.status == 0, let open = aliasText.firstIndex(of: "'"),
              let close = aliasText[aliasText.index(after: open)...].firstIndex(of: "'") else {
            throw SetupError(description: "ReadAlias default failed: \(alias) \(aliasText)")
        }
        let path = String(aliasText[aliasText.index(after: open)..<close])
        let label = CollectionProperty.read("Label", of: path, environment: clientEnvironment)
        // (<'Login'>,)
        let labelText = label.stdoutText
        guard label.status == 0, let lo = labelText.firstIndex(of: "'"),
              let lc = labelText.lastIndex(of: "'"), lo < lc else {
            throw SetupError(description: "reading the Label of \(path) failed: \(label) \(labelText)")
        }
        return String(labelText[labelText.index(after: lo)..<lc])
    }
}
