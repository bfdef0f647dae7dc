#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault

/// `read --clip [--clip-seconds N]`: where the secret goes instead of standard output, and for how long.
struct ClipRequest {
    static let defaultSeconds = 45
    static let longest = 3600

    let clipboard: Clipboard
    let seconds: Int

    /// The request the options make (nil without `--clip`); the clipboard tool is found now, before any prompt.
    static func from(_ args: ParsedArguments) throws(CommandFailure) -> ClipRequest? {
        let option = args.options["clip-seconds"]
        guard args.has("clip") else {
            if option != nil { throw .usage("--clip-seconds goes with --clip.") }
            return nil
        }
        let seconds: Int
        if let option {
            guard let n = Int(option), (1...longest).contains(n) else {
                throw .usage("--clip-seconds takes a whole number of seconds from 1 to \(longest), not '\(option)'.")
            }
            seconds = n
        } else if let raw = getenv("VAULTCTL_CLIP_SECONDS"), case let env = String(cString: raw), !env.isEmpty {
            guard let n = Int(env), (1...longest).contains(n) else {
                throw CommandFailure(code: .config, message: "VAULTCTL_CLIP_SECONDS is '\(env)'; set it to a whole number of seconds from 1 to \(longest), or unset it.")
            }
            seconds = n
        } else {
            seconds = defaultSeconds
        }
        let tool: ClipboardTool
        do { tool = try ClipboardTool.forSession() } catch {
            throw CommandFailure(code: .unavailable, message: "Cannot copy to the clipboard: \(error.reason).")
        }
        return ClipRequest(clipboard: Clipboard(tool: tool), seconds: seconds)
    }

    /// Copies, schedules the clear, and says where it went and for how long (on stderr; stdout stays empty).
    func deliver(_ secret: SecretBytes, slot: SlotName) throws(CommandFailure) {
        if let failure = clipboard.copy(secret) {
            throw CommandFailure(code: .unavailable, message: "Cannot copy to the clipboard: \(failure).")
        }
        guard ClipboardClearer.schedule(clipboard, holding: secret, after: seconds) else {
            clipboard.clearNow()
            throw CommandFailure(code: .failure, message: "Could not start the process that clears the clipboard, so the secret was taken off it again.")
        }
        Output.err("Copied slot '\(slot)' to the clipboard (\(clipboard.tool.kind.rawValue), \(clipboard.tool.session)); it is cleared in \(seconds) s if it still holds it.\n")
    }
}
