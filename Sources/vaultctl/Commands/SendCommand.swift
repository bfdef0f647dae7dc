#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl send SLOT --to HOST TARGET`: hands a slot's secret to `vaultctl receive TARGET` on a nearby
/// machine over ssh, after the same checks as supply (permission, a nearby session, the rate limit) and a
/// fresh PAM authentication.
enum SendCommand {
    /// How long the receiver may take to say it is ready (connecting, logging in, its checks), unless
    /// `VAULTCTL_SEND_SECONDS` says otherwise.
    static let defaultReadySeconds = 30
    /// How long the receiver's command (cryptsetup, …) may take after the secret went out.
    static let resultSeconds: Double = 120

    static func send(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try context.slotName(args.positionals[0])
        let targetName = args.positionals[1]
        guard Target.isValidName(targetName) else {
            throw .usage("\(Quote.text(targetName)) is not a valid target name: \(Target.nameRule).")
        }
        guard let host = args.options["to"] else {
            throw .usage("'send' needs the machine to send to (usage: vaultctl \(CommandTable.named("send")!.synopsis)).")
        }
        guard SSHHandOff.isValidHost(host) else {
            throw .usage("\(Quote.text(host)) is not a host ssh can be given (empty, starting with '-', or holding spaces or control characters).")
        }
        let handOff = SSHHandOff(sshCommand: environment("VAULTCTL_SSH"), host: host, target: targetName,
                                 readySeconds: Double(try readySeconds()), resultSeconds: resultSeconds)
        let vault = try context.vault()
        let checks = SupplyChecks(permissions: try context.supplyState(), origin: try context.origin(),
                                  limiter: try context.failureCount(), target: nil, clock: context.clock)
        var outcome: SSHHandOff.Outcome?
        do {
            try vault.supply(name, checks: checks, reason: .send(name, host: host, target: targetName)) { (secret) throws(VaultError) -> String? in
                let ended = try handOff.run(secret) { () throws(VaultError) in try context.recordDisclosureInVault("handed-over") }
                outcome = ended
                switch ended {
                case .answered(let line, _) where line.word == .delivered:
                    return nil
                case .answered(let line, true) where line.word == .rejected:
                    // The receiver's command took the secret and failed: a failed attempt here too.
                    return "\(host) did not accept the secret: \(line.text)"
                default:
                    // Not delivered, and not a rejected secret: not counted (how it ended is reported below).
                    throw .consumerFailed("not delivered")
                }
            }
        } catch {
            if let failure = context.auditFailure { throw failure }
            if let outcome, let failure = failure(outcome, host: host) { throw failure }
            if let outcome, case .answered(let line, _) = outcome, line.word == .unlocked {
                Output.message("\(host): \(line.text).")
                return
            }
            throw ErrorReport.failure(error)
        }
        if case .answered(let line, _)? = outcome { Output.message("\(host): \(line.text).") }
    }

    /// The failure for how a hand-off ended, or nil when it is not one (delivered, already unlocked) or was
    /// counted as a rejected secret (reported by the vault's own error).
    static func failure(_ outcome: SSHHandOff.Outcome, host: String) -> CommandFailure? {
        switch outcome {
        case .answered(let line, let sent):
            switch line.word {
            case .ready, .delivered, .unlocked: return nil
            case .rejected: return sent ? nil : CommandFailure(code: .failure, message: "\(host): \(line.text).")
            case .refused: return CommandFailure(code: .denied, message: "\(host) refused: \(line.text).")
            case .blocked: return CommandFailure(code: .tryLater, message: "\(host): \(line.text); try again later.")
            case .failed: return CommandFailure(code: .failure, message: "\(host): \(line.text).")
            }
        case .unreachable(let why, let status):
            // The receiver ran but stopped before the protocol (its own message, quoted, is in `why`, from
            // ssh's captured stderr): its refusal or block keeps its code.
            switch status {
            case 77?: return CommandFailure(code: .denied, message: "\(why); the receiver refused. Nothing was sent.")
            case 75?: return CommandFailure(code: .tryLater, message: "\(why); the receiver asked to try later. Nothing was sent.")
            default: return CommandFailure(code: .unavailable, message: "Cannot hand over: \(why). Nothing was sent.")
            }
        case .noResult(let why):
            return CommandFailure(code: .unavailable, message: "\(why): the secret was sent and may or may not have been delivered; check the target.")
        }
    }

    /// `VAULTCTL_SEND_SECONDS` (1 to 600), else the default.
    static func readySeconds() throws(CommandFailure) -> Int {
        guard let text = environment("VAULTCTL_SEND_SECONDS") else { return defaultReadySeconds }
        guard let n = Int(text), (1...600).contains(n), String(n) == text else {
            throw CommandFailure(code: .config, message: "VAULTCTL_SEND_SECONDS is \(Quote.text(text)); set it to a whole number of seconds from 1 to 600, or unset it.")
        }
        return n
    }

    /// An environment variable; nil when unset or empty.
    static func environment(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }
}
