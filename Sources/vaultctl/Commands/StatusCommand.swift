import JSON
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl status SLOT [--verbose] [--json]`: where a secret is, as far as can be known. Never prompts.
///
/// The text is `STATE: one sentence` on the first line, then, one a line and indented, what qualifies it or
/// needs the person (a lock, another copy, a copy not ruled out, a boundary not in effect, the last supply);
/// `--verbose` adds what it means (how far an item may travel, what binds a key, what guards the device slot).
/// Short by default, as `git status -s` or `systemctl is-active` are to a script and a glance: the first line
/// alone answers "where is it", and nothing that changes what to do is hidden behind the flag.
enum StatusCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        // A protected vault's gate is not waited for before the looks begin: the Secret Service's look is
        // started first and overlaps the gate's start-up; the device look's request waits for the hello. A
        // gate that cannot run is the error (69) at once, in the words `protection()` gives it.
        let vault = try context.vault(helloAtFirstRequest: true)
        var deviceReady: (() throws(VaultError) -> Void)?
        if case .gate(let client) = try context.protection() { deviceReady = { () throws(VaultError) in _ = try client.start() } }
        let looked: Result<LocationStatus, VaultError>
        do { looked = .success(try vault.status(name, deviceReady: deviceReady)) } catch { looked = .failure(error) }
        try context.confirmGate()
        var status: LocationStatus
        do { status = try looked.get() } catch { throw ErrorReport.failure(error) }
        // Which boundary guards a device-slot value: the gate, or none (and why an installed gate is not in effect).
        // A boundary in effect is what it means (a detail); one missing is what the person should know (a note).
        let protection = try context.protection()
        if status.mode == .device {
            if case .gate = protection { status.details.append(protection.sentence) } else { status.notes.append(protection.sentence) }
        }
        // Supply facts are shown only when the slot was ever allowed or supplied.
        // Supply facts need the policy (for the default); a malformed policy must not stop status.
        let supply = try? context.supplyState()
        let allowed = (try? supply?.isAllowed(name)) ?? false
        let last = try? supply?.lastSupply(name)
        if args.has("json") {
            let lastJSON = last.flatMap { $0 }.flatMap { $0 }.map {
                "{\"time\":\(JSON.string(TimeText.iso8601($0.time))),\"origin\":\(JSON.string($0.origin)),\"accepted\":\($0.rejected ? "false" : "null")}"
            } ?? "null"
            // What the PAM stack a read goes through names (as its file says): a password, a finger, a key.
            let pam = PAMStack.read()?.json ?? "null"
            let extra = [("allowSupply", allowed ? "true" : "false"), ("lastSupply", lastJSON), ("boundary", JSON.string(protection.word)),
                         ("pam", pam)]
            Output.out("\(json(status, extra: extra))\n")
        } else {
            if allowed { status.notes.append("It may be supplied to other programs.") }
            if let l = last.flatMap({ $0 }).flatMap({ $0 }) {
                status.notes.append(l.rejected
                    ? "Last supplied \(TimeText.iso8601(l.time)) (\(l.origin)), and not accepted: the program came back for it, which counted as a failed attempt."
                    : "Last supplied \(TimeText.iso8601(l.time)) (\(l.origin)).")
            }
            Output.out(text(status, verbose: args.has("verbose")))
        }
    }

    /// `STATE: summary`, then each note (and with `verbose` each detail) on a line of its own, indented.
    static func text(_ s: LocationStatus, verbose: Bool, more: [String] = []) -> String {
        var lines = ["\(s.state.rawValue): \(s.summary)"]
        lines += (s.notes + more + (verbose ? s.details : [])).map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The status object; `extra` adds fields (for the recovery code's `copied`). `message` is the whole text
    /// as one paragraph (summary, notes, details), `summary` its first sentence; `recorded` what the mode
    /// record names (null: no entry, or a record that cannot be read).
    static func json(_ s: LocationStatus, extra: [(String, String)] = []) -> String {
        var fields = [
            ("slot", JSON.string(s.slot.rawValue)),
            ("state", JSON.string(s.state.rawValue)),
            ("mode", s.mode.map { JSON.string($0.rawValue) } ?? "null"),
            ("message", JSON.string(s.message)),
            ("summary", JSON.string(s.summary)),
            ("binding", s.binding.map { JSON.string($0) } ?? "null"),
            ("recorded", s.recorded.map { JSON.string($0.rawValue) } ?? "null"),
        ]
        fields += extra
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
