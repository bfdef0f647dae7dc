import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl recovery generate|show|status|confirm-copied`: the account recovery code in slot 'recovery-code'.
enum RecoveryCommand {
    static func generate(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let mode = SlotMode(rawValue: args.options["mode"] ?? "device")!
        let vault = try context.vault()
        do {
            let outcome = try vault.generateRecoveryCode(mode: mode, replace: args.has("replace"), mark: context.copiedMark())
            if let warning = outcome.warning { Output.message("warning: \(warning)") }
        } catch {
            throw ErrorReport.failure(error)
        }
        Output.message("a new recovery code is in slot '\(RecoveryCode.slot)' (\(mode.rawValue)). Show it with 'vaultctl recovery show', write it down, then run 'vaultctl recovery confirm-copied'.")
    }

    static func show(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        do { try ReadCommand.run(ParsedArguments(positionals: [RecoveryCode.slot.rawValue]), context) } catch {
            throw pointingToGenerate(error)
        }
    }

    /// "Slot 'recovery-code' is empty; store a value with …" points to the wrong command for the recovery
    /// code, which `recovery generate` makes.
    static func pointingToGenerate(_ failure: CommandFailure) -> CommandFailure {
        guard failure.code == .noInput else { return failure }
        return CommandFailure(code: .noInput, message: "There is no recovery code yet; make one with 'vaultctl recovery generate', write it down, then run 'vaultctl recovery confirm-copied'.")
    }

    static func status(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        let s: Vault.RecoveryStatus
        do { s = try vault.recoveryStatus(mark: context.copiedMark()) } catch { throw ErrorReport.failure(error) }
        let copied = s.copied.map { $0 ? "true" : "false" } ?? "null"
        if args.has("json") {
            Output.out("\(StatusCommand.json(s.location, extra: [("copied", copied)]))\n")
        } else {
            let mark: String
            switch s.copied {
            case true?: mark = "You marked this code as written down."
            case false?: mark = s.location.state == .none ? "" : "Not marked as written down: run 'vaultctl recovery confirm-copied' once you have."
            case nil: mark = "Whether you marked this code as written down could not be checked."
            }
            Output.out(StatusCommand.text(s.location, verbose: args.has("verbose"), more: mark.isEmpty ? [] : [mark]))
        }
    }

    static func confirmCopied(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        do { try vault.confirmRecoveryCopied(mark: context.copiedMark()) } catch {
            throw pointingToGenerate(ErrorReport.failure(error))
        }
        Output.message("marked the current recovery code as written down; a new code clears the mark.")
    }
}
