import GateProtocol
import VaultRules

/// One entry of the receiver's own configuration: what `vaultctl receive NAME` runs with a secret that
/// arrives. The sender names the entry and never chooses what runs.
///
/// `check` is a command line run with `/bin/sh -c` that exits 0 while the target is still locked (as
/// supply's `--if-locked`); `command` is the program and its arguments, run with the secret on stdin.
public struct Target: Sendable, Equatable {
    public let name: String
    public let check: String?
    public let command: [String]

    public init(name: String, check: String?, command: [String]) {
        self.name = name
        self.check = check
        self.command = command
    }

    /// The rule a target name follows, for messages.
    public static let nameRule = "1 to 64 letters, digits, '.', '_' or '-', not starting with '-' or '.'"

    /// Whether `name` is a valid target name: also one word for ssh's remote command line and for
    /// `authorized_keys`, so no quoting is ever needed.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: "-"), bytes[0] != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }
}
