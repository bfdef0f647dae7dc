import Slots

/// Help screens, generated from the command table.
enum Help {
    static let version = "vaultctl 0.1.0"

    static var overview: String {
        var s = """
        vaultctl — keep small secrets in access-controlled slots; every read needs a fresh PAM authentication.

        Usage: vaultctl COMMAND [OPTIONS] [ARGS]

        Commands:

        """
        let width = CommandTable.all.map { $0.name.count }.max() ?? 0
        for c in CommandTable.all {
            s += "  \(pad(c.name, width))  \(c.abstract)\n"
        }
        s += """

        Options:
          --help     \(helpOption)
          --version  show the version

        Exit codes:

        """
        for code in ExitCode.allCases {
            s += "  \(pad(String(code.rawValue), 3))  \(code.meaning)\n"
        }
        s += "\nEnvironment:\n"
        let nameWidth = environment.map { $0.name.count }.max() ?? 0
        for (name, meaning) in environment { s += "  \(pad(name, nameWidth))  \(meaning)\n" }
        s += "\nThe manual page (vaultctl help --man | man -l -) also lists the files and the security notes.\n"
        return s
    }

    static let helpOption = "show help (also: vaultctl help COMMAND, vaultctl COMMAND --help)"

    /// The environment variables vaultctl reads, for `help` and the manual page.
    static let environment: [(name: String, meaning: String)] = [
        ("VAULT_ASKPASS", "program that prints your password (called with the prompt as its argument)"),
        ("XDG_STATE_HOME", "the state folder is $XDG_STATE_HOME/vaultctl (default ~/.local/state/vaultctl): the device slots live there unless vaultctl-gate holds them, in /var/lib/vaultctl/UID, which this does not move"),
        ("XDG_CONFIG_HOME", "the mode record lives in $XDG_CONFIG_HOME/vaultctl (default ~/.config/vaultctl)"),
        ("VAULTCTL_CLIP_SECONDS", "how long 'read --clip' leaves a secret on the clipboard (default 45)"),
        ("VAULTCTL_SSH", "the ssh command 'send' runs, as GIT_SSH_COMMAND: through /bin/sh -c 'exec …', arguments appended (default ssh)"),
        ("VAULTCTL_SEND_SECONDS", "how long 'send' waits for the receiver to say it is ready (default 30)"),
        ("WAYLAND_DISPLAY, DISPLAY", "the session whose clipboard 'read --clip' uses (wl-copy; else xclip or xsel)"),
        ("DBUS_SESSION_BUS_ADDRESS", "the session bus where the Secret Service is asked (else $XDG_RUNTIME_DIR/bus)"),
        ("VAULTCTL_PROMPT_SECONDS", "how long to wait for an answer to a Secret Service provider's prompt on a desktop (default 60)"),
        ("VAULTCTL_TPM2_TCTI", "the TPM that seals the device key (a tpm2-tss TCTI string; 'none': no TPM; default /dev/tpmrm0)"),
    ]

    /// The files vaultctl keeps, for the manual page.
    static let files: [(path: String, meaning: String)] = [
        ("$XDG_STATE_HOME/vaultctl/", "in a vault not behind vaultctl-gate, the device key (device.key) and the sealed slot files (slots/): they stay on this machine, and deleting the folder loses them"),
        ("$XDG_STATE_HOME/vaultctl/ratelimit.json, supply.json, audit.log, locked", "the rate limit, supply permissions and last supplies, the audit log (rotated at 1 MiB), the vault lock"),
        ("$XDG_STATE_HOME/vaultctl/device.tpm2", "the device key sealed by the TPM (its public and private blobs), when a TPM holds it"),
        ("$XDG_STATE_HOME/vaultctl/keyring-locked", "the Secret Service collection 'vaultctl lock' locked, for 'vaultctl unlock' to unlock"),
        ("$XDG_STATE_HOME/vaultctl/attempts/", "one marker per gated attempt in progress (the rate limit's places)"),
        ("$XDG_STATE_HOME/vaultctl/askpass-last.json", "per slot, when askpass last delivered and a salted fingerprint of who asked (never the prompt or the secret), so a request repeated right after counts the delivery as not accepted"),
        ("$XDG_CONFIG_HOME/vaultctl/targets.json", "the targets 'vaultctl receive' may unlock with a secret sent to it ('vaultctl target add')"),
        ("$XDG_STATE_HOME/vaultctl/protected-by-gate", "left in a vault moved behind vaultctl-gate: a gate that went missing is then an error, never a quiet return to files here"),
        ("/var/lib/vaultctl/UID/", "the store of vaultctl-gate (root:vaultctl 0770), one folder per user: a protected vault's device key and slots, rate limit, vault lock and the gate's audit log; deleting the state folder does not touch it"),
        gateFile,
        ("/etc/vaultctl/gate.conf, /etc/vaultctl/policy.json", "root's choices for the gate (which TPM) and root's policy, which a user's own can only tighten"),
        ("$XDG_CONFIG_HOME/vaultctl/modes.json", "which slot each secret went to; may travel with your config"),
        ("$XDG_CONFIG_HOME/vaultctl/recovery.json", "the recovery code's copied mark (a salted fingerprint, never the code)"),
        ("$XDG_CONFIG_HOME/vaultctl/policy.json", "your policy, when you want one (else the built-in default)"),
        ("/etc/pam.d/vaultctl", "the PAM service every gated command authenticates with (without it PAM uses the other service); the stacks vaultctl ships are in \(Installation.current.pamStacksPlace)"),
    ]

    /// This install's vaultctl-gate, for the manual page: its path, or where installs put it.
    static var gateFile: (path: String, meaning: String) {
        let what = "the gate, set-group-ID vaultctl: the only program that reaches /var/lib/vaultctl"
        switch Installation.current.kind {
        case .package, .makeInstall: return (Installation.current.gatePlace, what)
        case .notInstalled:
            return ("PREFIX/libexec/vaultctl/vaultctl-gate", "\(what), beside an installed PREFIX/bin/vaultctl (the Debian package's is \(Installation.packageGate))")
        }
    }

    /// The commands of a group (`vaultctl recovery`).
    static func group(_ word: String) -> String {
        let members = CommandTable.all.filter { $0.name.hasPrefix("\(word) ") }
        let width = members.map { $0.synopsis.count }.max() ?? 0
        var s = "Usage: vaultctl \(word) SUBCOMMAND\n\n"
        for c in members { s += "  \(pad(c.synopsis, width))  \(c.abstract)\n" }
        return s
    }

    static func screen(for c: Command) -> String {
        var s = "Usage: vaultctl \(c.synopsis)\n\n\(c.abstract)\n"
        if !c.discussion.isEmpty { s += "\n\(c.discussion)\n" }
        if !c.options.isEmpty {
            s += "\nOptions:\n"
            let labels = c.options.map { o in o.value.map { "--\(o.name) \($0)" } ?? "--\(o.name)" }
            let width = labels.map(\.count).max() ?? 0
            for (o, label) in zip(c.options, labels) {
                s += "  \(pad(label, width))  \(o.help)\n"
            }
        }
        return s
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(0, width - s.count))
    }
}
