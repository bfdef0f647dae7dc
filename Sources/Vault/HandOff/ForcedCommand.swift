import GateProtocol
import VaultRules

/// The `authorized_keys` side of a hand-off: the line that binds a sender's key to one target, and the
/// check that `vaultctl receive` really runs as that line's forced command.
///
/// With `command="… receive TARGET",restrict`, sshd runs that command whatever the client asks for, and
/// puts what it asked for in `SSH_ORIGINAL_COMMAND`; `restrict` turns off forwarding, the agent, X11 and
/// the terminal. `vaultctl send` always asks for `vaultctl receive TARGET`, so `SSH_ORIGINAL_COMMAND` is
/// how the receiver knows (a) a forced command ran it (without one sshd leaves the variable unset: a key
/// that may run any command is refused, since it could do much more than hand over a secret), and (b) the
/// sender meant this target and not another one the same key cannot reach.
public enum ForcedCommand {
    /// Why the receiver refuses this run, or nil when it is the forced command the sender asked for.
    public static func refusal(target: String, originalCommand: String?) -> String? {
        guard let asked = originalCommand else {
            // sshd leaves SSH_ORIGINAL_COMMAND unset both for a key without a forced command and for a
            // forced one when the client asked for no command (`ssh -T host`): the two cannot be told apart.
            return "vaultctl receive runs only as the forced command of a key in authorized_keys (command=\"vaultctl receive \(target)\",restrict …): either the sender asked for no command ('vaultctl send' always asks for one), or this key is not restricted to it and could do more than hand over a secret (print the line with 'vaultctl receive --print-authorized-key KEY.pub \(target)')"
        }
        let words = asked.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 3, words[0] == "vaultctl" || words[0].hasSuffix("/vaultctl"), words[1] == "receive" else {
            return "this key may only hand a secret to target '\(target)'; it asked to run something else (\(OriginJudge.quoted(asked)))"
        }
        guard words[2] == target else {
            return "this key may only hand a secret to target '\(target)', not to \(OriginJudge.quoted(String(words[2])))"
        }
        return nil
    }

    /// The command sshd should run for a sender's key: `vaultctl receive TARGET` by its absolute path.
    public static func command(vaultctl: String, target: String) -> String {
        "\(vaultctl) receive \(target)"
    }

    /// The `authorized_keys` line for `publicKey` (one line of a `.pub` file: "TYPE BASE64 [COMMENT]");
    /// nil when the path holds a `"` or the key is not of that shape (options of its own, several lines).
    public static func authorizedKeysLine(vaultctl: String, target: String, publicKey: String) -> String? {
        var key = Substring(publicKey)
        while key.last == "\n" || key.last == "\r" { key = key.dropLast() }
        let fields = key.split(separator: " ", omittingEmptySubsequences: true)
        guard !vaultctl.contains("\""), !vaultctl.contains("\\"), fields.count >= 2,
              key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }),
              isKeyType(fields[0]), fields[1].utf8.allSatisfy(isBase64) else { return nil }
        return "command=\"\(command(vaultctl: vaultctl, target: target))\",restrict \(key)"
    }

    /// "ssh-ed25519", "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com", "ssh-rsa", …
    static func isKeyType(_ word: Substring) -> Bool {
        (word.hasPrefix("ssh-") || word.hasPrefix("ecdsa-") || word.hasPrefix("sk-"))
            && word.utf8.allSatisfy { isBase64($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: ".") }
    }

    static func isBase64(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
            || b == UInt8(ascii: "+") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=")
    }
}
