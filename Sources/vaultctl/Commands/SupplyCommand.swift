import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl supply`, `vaultctl askpass`, `vaultctl allow-supply`: handing a stored secret to another program.
enum SupplyCommand {
    static func supply(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        guard let split = args.positionalsBeforeDashDash, split == 1, args.positionals.count > 1 else {
            throw .usage("'supply' needs the slot, then '--', then the command to run (usage: vaultctl supply SLOT [--if-locked CHECK] -- COMMAND [ARG…]).")
        }
        let name = try context.slotName(args.positionals[0])
        let command = Array(args.positionals[1...])
        // A COMMAND that cannot run is found before any check or prompt: a typo must not cost a password.
        switch Spawn.resolve(command[0]) {
        case nil:
            throw .usage("\(Quote.text(command[0])) is not a program (not found\(command[0].contains("/") ? "" : " in PATH")); nothing was asked or supplied.")
        case (let path, false)?:
            throw CommandFailure(code: .unavailable, message: "\(Quote.text(path)) cannot be run (it is not executable); nothing was asked or supplied.")
        default:
            break
        }
        var status: Int32 = 0
        try run(name, args, context) { (secret) throws(VaultError) -> String? in
            try context.recordDisclosureInVault("handed-over")
            let outcome = Delivery.toStdin(command, secret)
            status = outcome.status
            guard status != 0 else { return nil }
            // Only a COMMAND that read the secret and then failed may have rejected it: that counts. One
            // that never read its stdin failed for reasons of its own, and is not counted (thrown, not returned).
            guard outcome.readAny else {
                throw .consumerFailed("\(Quote.text(command[0])) exited \(status) without reading the secret from its standard input; not counted as a failed attempt")
            }
            return "\(Quote.text(command[0])) exited \(status) after reading the secret"
        }
    }

    static func askpass(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let asked = args.positionals.count > 1 ? args.positionals[1] : nil
        if let asked, AskedPrompt.isGitUsernamePrompt(asked) {
            throw CommandFailure(code: .usage, message: "askpass does not answer git's username prompt: a token given as the username ends up in git's next prompt, in every process list and on the terminal. Let git ask vaultctl directly: git config --global credential.helper vaultctl (see 'vaultctl help credential get').")
        }
        // The asking program's prompt (e.g. "Enter passphrase for key …") tells the person what the secret
        // is for; it is shown in the PAM prompt's context, cleaned and cut short, and logged nowhere.
        let reason = PromptReason.askpass(name, asked: asked.map(AskedPrompt.shown))
        // The same program asking the same again right after a delivery did not accept it (ssh-add with a
        // wrong passphrase in the slot): that delivery counts as a failure, so the rate limit ends the loop.
        let repeats = AskpassRepeats(stateFolder: context.locations.state, clock: context.clock)
        let request = AskpassRepeats.Request.current(slot: name, prompt: asked ?? "")
        do {
            if try repeats.isRepeat(request) {
                Output.message("the program asking came back with the same request, so the secret it was given last time was not accepted; counted as a failed attempt.")
                try context.failureCount().recordFailure()
                // The earlier delivery's line said "ok" (as far as vaultctl could see then): this one says what
                // became of it, and status no longer calls it simply "last supplied".
                try? context.supplyState().markLastSupplyRejected(name)
                let line = AuditEntry(time: TimeText.iso8601(context.clock.now()), command: CommandKind.askpass.rawValue,
                                      slot: name.rawValue, origin: (try? context.origin().description) ?? "unknown origin",
                                      result: "rejected",
                                      reason: "the program asking came back with the same request: the secret it was given last time was not accepted")
                do throws(VaultError) { try context.audit.append(line) } catch { throw ErrorReport.auditFailure(error) }
            }
        } catch let e as CommandFailure { throw e } catch { throw ErrorReport.unexpected(error) }
        try run(name, args, context, reason: reason, askpass: true) { (secret) throws(VaultError) -> String? in
            if let asked, secret.count >= AskedPrompt.shortestSecretChecked, AskedPrompt.contains(asked, secret) {
                return "the prompt contains this slot's secret (the asking program was given it before, so it is in process lists): nothing was printed. Change the secret; for git use the credential helper (git config --global credential.helper vaultctl)"
            }
            try context.recordDisclosureInVault("ok")
            guard Output.secret(secret) else { return "the secret could not be written to standard output" }
            try? repeats.delivered(request)
            return nil
        }
    }

    static func allow(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let on: Bool
        switch args.positionals[1] {
        case "on": on = true
        case "off": on = false
        default: throw .usage("'allow-supply' takes on or off, not \(Quote.text(args.positionals[1])).")
        }
        let state = try context.supplyState()
        do {
            if on { try context.vault().gate.verify(reason: PromptReason.allowSupply(name).text, slots: [name]) }
            try state.setAllowed(name, on)
        } catch let e as CommandFailure {
            throw e
        } catch {
            throw ErrorReport.unexpected(error)
        }
    }

    private static func run(_ name: SlotName, _ args: ParsedArguments, _ context: Context, reason: PromptReason? = nil,
                            askpass: Bool = false, deliver: (SecretBytes) throws(VaultError) -> String?) throws(CommandFailure) {
        let vault = try context.vault()
        let checks = SupplyChecks(permissions: try context.supplyState(), origin: try context.origin(),
                                  limiter: try context.failureCount(),
                                  target: args.options["if-locked"].map(TargetCheck.init(program:)),
                                  clock: context.clock)
        do { try vault.supply(name, checks: checks, reason: reason, deliver: deliver) } catch {
            if let failure = context.auditFailure { throw failure }
            // Already unlocked: for supply, the outcome a script that unlocks idempotently wants, said and exit
            // 0. Not for askpass: there exit 0 means "the answer is on stdout", and an empty answer would go to
            // the asking program as a (wrong) password; it declines instead (exit 1, as an askpass that
            // cancels).
            if case .alreadyUnlocked(let why) = error {
                Output.message("\(why).")
                if askpass { throw CommandFailure(code: .failure, message: "askpass declined: \(why); nothing was printed.") }
                return
            }
            throw ErrorReport.failure(error)
        }
    }
}
