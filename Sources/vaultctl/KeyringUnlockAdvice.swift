import GateProtocol
import Vault
import VaultRules

/// The command `vaultctl unlock` prints for unlocking gnome-keyring's collection without a desktop.
///
/// gnome-keyring has no call that unlocks a running daemon from stdin: `--unlock` alone starts a second
/// daemon beside the running one and the collection stays locked, so the command restarts it unlocked
/// (`--replace`; it also works when none runs). The password comes from a prompt with echo off on this
/// terminal, never from an argument (which would land in the shell's history and in `/proc`):
/// `systemd-ask-password --echo=no` where it is installed (systemd 252 echoes `*` without `--echo=no`),
/// otherwise bash's `read -rs` (bash is Essential on Debian; `bash -c` works whatever the login shell is).
/// Both write the password without a newline, which gnome-keyring would take as part of it.
enum KeyringUnlockAdvice {
    /// What reads the password, by whether `systemd-ask-password` is found on `PATH`.
    static func prompt(systemdAskPassword: Bool) -> String {
        systemdAskPassword
            ? "systemd-ask-password --echo=no -n 'Keyring password:'"
            : #"bash -c 'IFS= read -rsp "Keyring password: " p; echo >&2; printf %s "$p"'"#
    }

    /// The whole command line, as printed.
    static func command(systemdAskPassword: Bool) -> String {
        "\(prompt(systemdAskPassword: systemdAskPassword)) | gnome-keyring-daemon --replace --unlock --components=secrets"
    }

    /// The command line for this machine (`systemd-ask-password` looked up on `PATH`).
    static var here: String {
        command(systemdAskPassword: Spawn.resolve("systemd-ask-password")?.executable == true)
    }

    /// The sentence that introduces the command, which ends the message so it can be copied to the line's end.
    static let lead = "with gnome-keyring and no desktop, restart it unlocked (its secrets component; add ssh and pkcs11 if your session uses them), its password asked with echo off:"
}
