#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl receive TARGET`: the receiving end of `vaultctl send`, run by sshd as the forced command of
/// the sender's key; and `vaultctl receive --print-authorized-key KEY.pub TARGET`, which prints that line.
///
/// It speaks only the hand-off protocol (``HandOffLine``) on standard output and writes nothing to standard
/// error once it runs: what it says reaches the sender through ssh, and the sender reports it. Its exit
/// status says the same for a person who runs it by hand: 0 delivered or already unlocked, 77 refused, 75
/// blocked, 1 otherwise. Every run leaves audit lines here (never the secret).
enum ReceiveCommand {
    static func receive(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let targetName = args.positionals[0]
        guard Target.isValidName(targetName) else {
            throw .usage("\(Quote.text(targetName)) is not a valid target name: \(Target.nameRule).")
        }
        if let keyFile = args.options["print-authorized-key"] {
            try printAuthorizedKey(keyFile, targetName)
            return
        }
        let policy = try context.policy()
        let origin = ReceiverOrigin.judge(SystemOriginProbe().gather(), remoteRanges: policy.remoteRanges,
                                          nearbyRanges: policy.nearbyRanges)
        let audit = context.audit
        func entry(_ result: String, _ reason: String) -> AuditEntry {
            AuditEntry(time: TimeText.iso8601(context.clock.now()), command: CommandKind.receive.rawValue, slot: nil,
                       origin: origin.description, result: result, reason: reason)
        }
        let final: HandOffLine
        do {
            try audit.checkWritable()
            let receiver = HandOffReceiver(targetName: targetName, originalCommand: getenv("SSH_ORIGINAL_COMMAND").map { String(cString: $0) },
                                           targets: TargetList(configFolder: context.locations.config),
                                           origin: origin, limiter: try context.limiter())
            final = receiver.run(input: 0, say: say) { () throws(VaultError) in
                try audit.append(entry("handed-over", "target '\(targetName)': the secret goes to its command"))
            }
        } catch {
            final = HandOffLine(.failed, "the receiver cannot run: \(ErrorReport.unexpected(error).message)")
        }
        _ = say(final)
        let result: String
        let code: ExitCode
        switch final.word {
        case .delivered, .unlocked, .ready: (result, code) = ("ok", .ok)
        case .refused: (result, code) = ("refused", .denied)
        case .blocked: (result, code) = ("refused", .tryLater)
        case .rejected, .failed: (result, code) = ("failed", .failure)
        }
        try? audit.append(entry(result, final.text))
        // The sender reports the line; an empty message prints nothing here.
        if code != .ok { throw CommandFailure(code: code, message: "") }
    }

    /// Writes one protocol line on standard output.
    static func say(_ line: HandOffLine) -> Bool {
        line.bytes.withUnsafeBytes { Output.writeAll(1, $0) }
    }

    /// `--print-authorized-key KEY.pub TARGET`: the `authorized_keys` line for the sender's public key.
    static func printAuthorizedKey(_ keyFile: String, _ targetName: String) throws(CommandFailure) {
        let text: [UInt8]
        do { text = try PolicyFileReader.read(keyFile, maximumCount: 16 * 1024) } catch {
            throw CommandFailure(code: .noInput, message: "\(Quote.text(keyFile)) cannot be read as a public key file; give the sender's KEY.pub (e.g. ~/.ssh/id_ed25519.pub copied from the sender).")
        }
        guard let key = String(validating: text, as: UTF8.self),
              key.split(separator: "\n", omittingEmptySubsequences: true).count == 1,
              let line = ForcedCommand.authorizedKeysLine(vaultctl: executablePath(), target: targetName, publicKey: key) else {
            throw CommandFailure(code: .dataError, message: "\(Quote.text(keyFile)) is not one OpenSSH public key line (TYPE BASE64 [COMMENT]); give the sender's .pub file, not its private key.")
        }
        Output.out(line + "\n")
    }

    /// This vaultctl's absolute path (`/proc/self/exe`), for the forced command; "vaultctl" when unknown.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "vaultctl" }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
