import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl store SLOT [--mode device|sync]`: the secret from stdin (not a terminal) or asked twice; PAM
/// first when it replaces a value.
enum StoreCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let mode = SlotMode(rawValue: args.options["mode"] ?? "device")!
        // A secret on standard input is read (and an empty one refused) before anything else is asked: a bad
        // input is said at once, not after a look at a bus that may be slow to answer. On a terminal the
        // password comes first, then the new secret.
        let piped = Terminal.isTerminal(0) ? nil : try readNewSecret(for: name)
        let vault = try context.vault()
        // Replacing a value asks for the password first (gate.storeOver); a wrong one leaves the old value.
        var wasEmpty: Bool
        do { wasEmpty = try vault.confirmStore(name, mode: mode) } catch { throw ErrorReport.failure(error) }
        let secret: SecretBytes
        if let piped { secret = piped } else { secret = try readNewSecret(for: name) }
        var outcome: Vault.StoreOutcome
        do throws(VaultError) {
            do { outcome = try vault.store(name, secret, mode: mode, expectingEmpty: wasEmpty) } catch {
                // A parallel store put a value there since it looked: now it is a replacement, asked for as one.
                guard case .changedMeanwhile = error else { throw error }
                wasEmpty = try vault.confirmStore(name, mode: mode)
                outcome = try vault.store(name, secret, mode: mode, expectingEmpty: wasEmpty)
            }
        } catch {
            throw ErrorReport.failure(error)
        }
        if let warning = outcome.warning { Output.message("warning: \(warning)") }
        if let elsewhere = outcome.recordedElsewhere { Output.message("warning: \(elsewhere).") }
        if args.has("allow-supply") {
            do { try context.supplyState().setAllowed(name, true) } catch { throw ErrorReport.unexpected(error) }
        }
    }

    static func readNewSecret(for name: SlotName) throws(CommandFailure) -> SecretBytes {
        let limit = SecretBytes.maximumCount
        if !Terminal.isTerminal(0) {
            switch SecretReader.read(fd: 0, limit: limit) {
            case .bytes(let s):
                guard !s.isEmpty else { throw ErrorReport.failure(SlotError.badSecretSize(0)) }
                return s
            case .tooLong: throw ErrorReport.failure(SlotError.badSecretSize(limit + 1))
            case .failed(let e):
                throw CommandFailure(code: .failure, message: "Failed to read the secret from standard input (error \(e)).")
            }
        }
        func typed(_ prompt: String) throws(CommandFailure) -> SecretBytes {
            switch Terminal.ask(prompt: prompt, limit: limit) {
            case .line(let s): return s
            // Ctrl-D at the prompt: the person at the terminal changed their mind.
            case .cancelled: throw CommandFailure(code: .failure, message: "Cancelled at the prompt; nothing was stored.", result: .cancelled)
            case .unavailable: throw CommandFailure(code: .usage, message: "No secret: give it on standard input or run from a terminal.")
            }
        }
        let first = try typed("Secret for slot '\(name)': ")
        let second = try typed("Again, to confirm: ")
        guard first.constantTimeEquals(second) else {
            throw CommandFailure(code: .dataError, message: "The two entries differ; nothing was stored.")
        }
        guard !first.isEmpty else { throw ErrorReport.failure(SlotError.badSecretSize(0)) }
        return first
    }
}
