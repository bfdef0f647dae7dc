import SecretService
import GateProtocol
import Slots
import VaultRules
import Vault

/// Dispatches the words after `vaultctl` to a command and turns any failure into one stderr line.
enum Entrypoint {
    /// `launched`: the gate `EarlyGate` started from the raw words, if it did.
    static func run(_ words: [String], launched: GateClient.Launched? = nil) -> ExitCode {
        SecretServiceSlot.tellAboutPrompts { Output.message($0) }
        do {
            try dispatch(words, launched: launched)
            sayWhatStaysBehind()
            return .ok
        } catch {
            // What the provider kept of a change made before the failure is true either way; the error stays last.
            sayWhatStaysBehind()
            // One line, whatever the message holds: a piece of input that escaped quoting cannot break it.
            // None for an empty message (`receive` has said everything on its channel already).
            if !error.message.isEmpty { Output.message(error.message) }
            return error.code
        }
    }

    /// What a command leaves behind that the person should know of, one line each: after it deleted or replaced
    /// an item in a Secret Service provider known to keep such copies (KeePassXC's Recycle Bin and History),
    /// saying so and how to turn it off (`KeptCopies`); after it made an unprotected vault (`NewVaultNotice`).
    private static func sayWhatStaysBehind() {
        if let notice = SecretServiceSlot.keptCopiesNotice() { Output.message(notice) }
        // A device-slot write that made an unprotected vault in the state folder (`NewVaultNotice`).
        if let notice = NewVaultNotice.said() { Output.message(notice) }
    }

    static func dispatch(_ words: [String], launched early: GateClient.Launched? = nil) throws(CommandFailure) {
        guard let first = words.first else {
            Output.err(Help.overview)
            throw .usage("No command given.")
        }
        switch first {
        case "--help", "-h":
            Output.out(Help.overview)
            return
        case "--version":
            Output.out("\(Help.version)\n")
            return
        default:
            break
        }
        guard let (command, used) = CommandTable.match(words) else {
            if CommandTable.isGroup(first) {
                if words.count == 1 || words[1] == "--help" || words[1] == "-h" {
                    Output.out(Help.group(first))
                    if words.count == 1 { throw .usage("\(Quote.text(first)) needs a subcommand.") }
                    return
                }
                throw .usage("Unknown command \(Quote.text(first + " " + words[1])).")
            }
            throw .usage("Unknown command \(Quote.text(first)).")
        }
        let rest = Array(words.dropFirst(used))
        if let dash = rest.firstIndex(of: "--"), rest[..<dash].contains("--help") || rest[..<dash].contains("-h") {
            Output.out(Help.screen(for: command))
            return
        } else if !rest.contains("--"), rest.contains("--help") || rest.contains("-h") {
            Output.out(Help.screen(for: command))
            return
        }
        // A protected command's time is mostly the gate's start-up: the installed gate started before the
        // words were decoded (EarlyGate), or starts now, while they are parsed and the context is made. A
        // usage error found meanwhile leaves it to end at once (its input closes when vaultctl exits); it
        // has asked and changed nothing by then.
        let launched = command.kind.looksAtVault ? early ?? GateClient.launchInstalled(authenticating: command.kind.authenticatesAsARule) : nil
        let parsed = try ArgumentParser.parse(rest, for: command)
        try command.checkPositionals(parsed)
        let passwordFromStandardInput = parsed.has(CommandTable.passwordStdinOption.name)
        if passwordFromStandardInput && Terminal.isTerminal(0) {
            throw .usage("--password-stdin reads a line from a pipe or file, but standard input is a terminal; leave the option out and vaultctl asks there with echo off.")
        }
        let context = Context(passwordFromStandardInput: passwordFromStandardInput)
        if command.kind.looksAtVault { context.startGateEarly(authenticating: command.kind.authenticatesAsARule, launched: launched) }
        // While the gate starts and vaultctl waits for its hello, a command that will ask the Secret Service
        // connects to the session bus on a thread of its own (its looks are still made, in order, under the
        // change lock: only the connection is made ahead).
        if command.kind.looksAtBothSlots && context.gateStartedEarly { SecretServiceSlot.connectAhead() }
        // Ctrl-C says "cancelled" and, for an audited command, leaves a line saying so.
        var cancelled: [UInt8]?
        if command.kind.isAudited {
            var line = entry(command.kind, parsed, context, result: AuditResult.cancelled.rawValue, reason: "ended by Ctrl-C (SIGINT) before its own line was written; what it had done by then stands")
            line.time = Interruption.placeholderTime
            cancelled = AuditLog.line(line)
        }
        Interruption.install(auditLine: cancelled, logPath: context.audit.path)
        defer { Interruption.uninstall() }
        if command.kind.isAudited {
            // A secret leaves only after its line is in the log: checked by writing it, not beforehand.
            context.auditBeforeDisclosure = { [unowned context] (result) throws(CommandFailure) in
                let line = entry(command.kind, parsed, context, result: result, reason: nil)
                try Interruption.writingOwnLine { () throws(CommandFailure) in
                    do throws(VaultError) { try context.audit.append(line) } catch { throw ErrorReport.auditFailure(error) }
                }
                context.disclosedResult = result
            }
        }
        do {
            try admit(command.kind, context)
            try command.run(parsed, context)
        } catch {
            // A usage error never ran the command: it writes nothing, not even a log line. Refusals of any
            // command (the vault is locked, the rate limit blocks) are logged too; a line that could not be
            // written just now is not tried again.
            let refused = error.code == .denied || error.code == .tryLater
            // `receive` writes its own lines (with the sender's address as sshd saw it).
            if error.code != .usage && context.auditFailure == nil && (command.kind.isAudited || refused) && command.kind != .receive {
                record(command.kind, parsed, context, failure: error)
            }
            throw error
        }
        // A read's line went out before its secret ("ok"); a supply's said "handed-over", this says how it ended.
        if command.kind.isAudited && context.disclosedResult != "ok" { record(command.kind, parsed, context, failure: nil) }
    }

    /// The checks before any command runs, in `Admission`'s order (the gate's requests run the same):
    /// the vault lock's allow-list, the audit log for audited commands, then the rate limit for gated commands
    /// (75 with no prompt while blocked).
    static func admit(_ kind: CommandKind, _ context: Context) throws(CommandFailure) {
        var checks: Admission = []
        if !kind.allowedWhileLocked { checks.insert(.vaultLock) }
        // `lock` locks even when its audit line cannot be written (it warns afterwards): locking is what matters.
        if kind.isAudited && kind != .lock { checks.insert(.auditLog) }
        // A protected vault's rate limit is the gate's, which checks it before any prompt.
        if kind.checksRateLimitFirst, try context.gateClient() == nil { checks.insert(.rateLimit) }
        try checks.check(isLocked: { () throws(CommandFailure) in try context.isVaultLocked() },
                         locked: { ErrorReport.failure(VaultError.vaultLocked) },
                         auditLog: { () throws(CommandFailure) in
                             do throws(VaultError) { try context.audit.checkWritable() } catch { throw ErrorReport.failure(error) }
                         },
                         rateLimit: { () throws(CommandFailure) in
                             let limiter = try context.limiter()
                             do throws(VaultError) { try limiter.check() } catch { throw ErrorReport.failure(error) }
                         })
    }

    /// The audit line of a command that ended (`failure` nil: it succeeded), written as best it can be: a
    /// line that cannot be written is a warning after a success and nothing more after a failure (whose
    /// own one line says what went wrong).
    static func record(_ kind: CommandKind, _ parsed: ParsedArguments, _ context: Context, failure: CommandFailure?) {
        // The failure's result as it was made (a password judged wrong; Ctrl-D at a prompt, the password's or
        // store's for the secret, is a cancel as Ctrl-C is), else its exit code's.
        let result = (failure?.auditResult ?? .ok).rawValue
        var lines = [entry(kind, parsed, context, result: failure == nil ? context.auditedResult ?? result : result,
                           reason: failure?.message ?? context.auditedSubject)]
        if !context.auditedSlots.isEmpty {
            // What was done slot by slot before (or without) a failure, then the failure's own line.
            let done = context.auditedSlots.map { slot, word in
                var line = entry(kind, parsed, context, result: word, reason: nil)
                line.slot = slot.rawValue
                return line
            }
            lines = failure == nil ? done : done + lines
        }
        // `lock` never waits behind another writer of the log: locking is what matters, the line is extra.
        // Ctrl-C is held back while the lines are written: after them it no longer says "cancelled".
        Interruption.writingOwnLine { () in
            for line in lines {
                do throws(VaultError) { try context.audit.append(line, waitingAtMost: kind == .lock ? 0 : 5) } catch {
                    if failure == nil {
                        Output.message("warning: could not write the audit log: \(ErrorReport.failure(error).message)")
                    }
                    return
                }
            }
        }
    }

    /// One audit line: command, slot, origin, result, reason (the error's one line; never a secret).
    static func entry(_ kind: CommandKind, _ parsed: ParsedArguments, _ context: Context, result: String,
                      reason: String?) -> AuditEntry {
        let slot: String?
        switch kind {
        case .recoveryShow, .recoveryGenerate, .recoveryConfirmCopied: slot = RecoveryCode.slot.rawValue
        case .targetAdd, .targetRemove: slot = nil  // a target's name is not a slot's
        default: slot = context.auditedSlot?.rawValue ?? parsed.positionals.first.flatMap { SlotName($0)?.rawValue }
        }
        let origin = (try? context.origin().description) ?? "unknown origin"
        return AuditEntry(time: TimeText.iso8601(context.clock.now()), command: kind.rawValue, slot: slot,
                          origin: origin, result: result, reason: reason)
    }
}
