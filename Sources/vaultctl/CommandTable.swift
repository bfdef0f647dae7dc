import Slots
/// One command: the data the parser, the help screens and the dispatcher all read.
struct Command: Sendable {
    let kind: CommandKind
    var name: String { kind.rawValue }
    /// Usage line after `vaultctl `.
    let synopsis: String
    let abstract: String
    /// Longer help: what it does, in a few lines.
    let discussion: String
    let positionals: ClosedRange<Int>
    let options: [OptionSpec]
    let run: @Sendable (ParsedArguments, Context) throws(CommandFailure) -> Void

    /// `options` are the command's own; every command that may ask PAM also takes `--password-stdin`
    /// (except where standard input carries something else).
    init(kind: CommandKind, synopsis: String, abstract: String, discussion: String, positionals: ClosedRange<Int>,
         options: [OptionSpec], run: @escaping @Sendable (ParsedArguments, Context) throws(CommandFailure) -> Void) {
        self.kind = kind
        self.synopsis = synopsis
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.options = options + (kind.takesPasswordStdin ? [CommandTable.passwordStdinOption] : [])
        self.run = run
    }
}

extension Command {
    /// Checks the positional words the synopsis names before any gate runs (the vault lock, the rate
    /// limit): a `SLOT` must be a valid slot name (and not a reserved one, for a command that changes or
    /// supplies a slot), a word like `on|off` one of its choices. So a usage error
    /// is a usage error (64, nothing logged) even while the rate limit blocks or the vault is locked.
    func checkPositionals(_ args: ParsedArguments) throws(CommandFailure) {
        let words = synopsis.split(separator: " ").dropFirst(name.split(separator: " ").count)
            .prefix { !$0.hasPrefix("[") && !$0.hasPrefix("-") }
        for (placeholder, value) in zip(words, args.positionals) {
            if placeholder == "SLOT" {
                guard let slot = SlotName(value) else {
                    throw .usage("\(Quote.text(value)) is not a valid slot name: \(SlotName.rule).")
                }
                if kind.refusesReservedNames && slot.isReserved {
                    throw .usage("\(Quote.text(value)) is a reserved name: \(SlotName.reservedRule); choose another.")
                }
            } else if placeholder.contains("|") && kind.isAudited {  // (the others check their own, with their own words)
                let choices = placeholder.split(separator: "|").map(String.init)
                guard choices.contains(value) else {
                    throw .usage("'\(name)' takes \(choices.joined(separator: " or ")), not \(Quote.text(value)).")
                }
            }
        }
    }
}

/// Every command vaultctl has, in the order help lists them.
enum CommandTable {
    static let modeOption = OptionSpec.value("mode", "MODE", choices: SlotMode.offered.map { $0.rawValue },
        "where to keep it: device (sealed file bound to this machine, the default) or sync (Secret Service item)")
    /// git passes the helper's arguments to all three actions: --mode matters only to store.
    static let credentialModeOption = OptionSpec.value("mode", "MODE", choices: SlotMode.offered.map { $0.rawValue },
        "where store keeps a new credential: device (the default) or sync; get and erase look in both")
    static let clipOptions: [OptionSpec] = [
        .flag("clip", "put the secret on the clipboard instead of standard output"),
        .value("clip-seconds", "N", "clear the clipboard after N seconds if it still holds the secret (default 45, or VAULTCTL_CLIP_SECONDS)"),
    ]
    /// `status` and `recovery status`: the explanation after the state's line.
    static let verboseOption = OptionSpec.flag("verbose", "also say what the state means (what binds the key, how far an item may travel)")
    /// Every command that may ask PAM takes it.
    static let passwordStdinOption = OptionSpec.flag("password-stdin",
        "answer PAM from standard input, one line per question (usually just the password), instead of VAULT_ASKPASS or the terminal")

    static let all: [Command] = [
        Command(kind: .store, synopsis: "store SLOT [--mode device|sync] [--allow-supply]",
                abstract: "Store a secret in a slot, replacing any old value.",
                discussion: """
                The secret is read from standard input when it is not a terminal (the exact bytes, nothing \
                trimmed), otherwise asked twice with echo off. It is never taken from arguments. Replacing a \
                value asks for your password first (VAULT_ASKPASS or the terminal; policy gate.storeOver). After \
                the new value is written and recorded, any copy in the other slot is removed. KeePassXC may keep \
                the value replaced or removed there (see 'vaultctl help delete').
                """,
                positionals: 1...1,
                options: [modeOption, .flag("allow-supply", "let 'vaultctl supply' and 'askpass' hand this slot to other programs")],
                run: StoreCommand.run),
        Command(kind: .read, synopsis: "read SLOT [--clip [--clip-seconds N]] [--password-stdin]",
                abstract: "Print a secret after a fresh PAM authentication.",
                discussion: """
                Every read authenticates you again through PAM (service 'vaultctl'). The password comes from \
                the program in VAULT_ASKPASS, or from the terminal; with --password-stdin, from standard input, \
                one line per PAM question (usually just the password). The exact bytes are written to standard output, with a newline added only \
                when it is a terminal. With --clip, it goes to the clipboard instead (wl-copy on Wayland, xclip or \
                xsel on X11) and is cleared after 45 s (--clip-seconds, VAULTCTL_CLIP_SECONDS) if the clipboard still holds it.
                """,
                positionals: 1...1, options: clipOptions, run: ReadCommand.run),
        Command(kind: .delete, synopsis: "delete SLOT [--password-stdin]",
                abstract: "Delete a secret from both slots, after a fresh PAM authentication.",
                discussion: """
                Asks for your password (policy gate.delete), then deletes the value from the device slot and its \
                item from the Secret Service, and its record. What the provider does with a deleted item is its \
                own: gnome-keyring removes it for good; KeePassXC, with its defaults, moves it (value and History \
                included) to its database's Recycle Bin, which the Secret Service API does not reach, and keeps \
                a replaced value in the item's History. After a command that deleted or replaced an item in \
                KeePassXC, vaultctl says in one line that it may have kept it, and how to turn that off: in \
                Database → Database Settings… → General, "Max. history items" 0 and "Use recycle bin" unticked.
                """,
                positionals: 1...1, options: [], run: DeleteCommand.run),
        Command(kind: .list, synopsis: "list [--json]",
                abstract: "List slot names and where each is kept (never the secrets).",
                discussion: "One line per slot and mode. With --json, a document for programs.",
                positionals: 0...0, options: [.flag("json", "print JSON")], run: ListCommand.run),
        Command(kind: .status, synopsis: "status SLOT [--verbose] [--json]",
                abstract: "Say where a secret is, as far as vaultctl can know. Never prompts.",
                discussion: """
                The first line is STATE: one sentence. States: in-slot (an item in the Secret Service; whether it \
                reaches other devices depends on the provider and is never confirmed), cannot-leave-device (in the \
                device slot under a key sealed by this machine's TPM), on-this-device (in the device slot under a \
                key bound to the machine id: a deliberate copy to a machine with the same id opens), unknown (the \
                slot that would hold it could not be asked), none (both asked, both empty; a value recorded as \
                stored in the sync slot that the Secret Service running now does not hold is said so). Indented \
                lines follow with what qualifies it (a lock, another copy, a boundary not in effect); --verbose \
                adds what it means (what binds a device key here: tpm2 or machine-id, also "binding" in JSON). \
                Exit 0 whenever it answered.
                """,
                positionals: 1...1, options: [verboseOption, .flag("json", "print JSON")], run: StatusCommand.run),
        Command(kind: .move, synopsis: "move SLOT --to device|sync [--password-stdin]",
                abstract: "Move a secret to the other slot (after PAM), verifying before the old copy goes.",
                discussion: """
                Writes the target slot, reads it back and compares, updates the record, then deletes the \
                source. Interrupted at any point, the secret stays readable. KeePassXC may keep the item moved \
                out of it in its Recycle Bin (see 'vaultctl help delete').
                """,
                positionals: 1...1,
                options: [.value("to", "MODE", choices: SlotMode.offered.map { $0.rawValue }, "the slot to move it to")],
                run: MoveCommand.run),
        Command(kind: .recoveryGenerate, synopsis: "recovery generate [--mode device|sync] [--replace] [--password-stdin]",
                abstract: "Store a new random recovery code in slot 'recovery-code' (not shown).",
                discussion: """
                160 random bits as 32 letters in groups of four. Show it with 'vaultctl recovery show', write it \
                down, then run 'vaultctl recovery confirm-copied'. Replacing an old code asks for your password \
                (gate.storeOver); replacing one marked as written down also needs --replace and always asks.
                """,
                positionals: 0...0,
                options: [modeOption, .flag("replace", "replace a recovery code that is marked as written down")],
                run: RecoveryCommand.generate),
        Command(kind: .recoveryShow, synopsis: "recovery show [--password-stdin]",
                abstract: "Print the recovery code after a fresh PAM authentication.",
                discussion: "",
                positionals: 0...0, options: [], run: RecoveryCommand.show),
        Command(kind: .recoveryStatus, synopsis: "recovery status [--verbose] [--json]",
                abstract: "Where the recovery code is, and whether you marked this code as copied.",
                discussion: """
                The copied mark counts only for the code it was made for: a new code clears it. 'copied' is \
                null when the code could not be checked (the keyring is locked or unreachable). Nothing is \
                decrypted: a device-slot code is judged by a hash of its sealed file.
                """,
                positionals: 0...0, options: [verboseOption, .flag("json", "print JSON")], run: RecoveryCommand.status),
        Command(kind: .recoveryConfirmCopied, synopsis: "recovery confirm-copied [--password-stdin]",
                abstract: "Mark the current recovery code as written down.",
                discussion: "The mark is bound to the code, so making it reads the code: it asks for your password like 'recovery show'.",
                positionals: 0...0, options: [], run: RecoveryCommand.confirmCopied),
        Command(kind: .supply, synopsis: "supply SLOT [--if-locked CHECK] [--password-stdin] -- COMMAND [ARG…]",
                abstract: "Run COMMAND with the secret on its standard input, after every check and PAM.",
                discussion: """
                In this order, each refused before any prompt: the slot allows supply (see allow-supply); the \
                session is nearby (not a remote login); the rate limit does not block; with --if-locked, CHECK \
                (run by /bin/sh) exits 0, meaning the target still needs the secret (a target already unlocked \
                is exit 0 with nothing supplied). Then PAM, then CHECK again right before delivery. A COMMAND \
                that cannot run is refused before all of that (64 or 69). The secret goes to COMMAND's stdin \
                followed by EOF, never to its arguments or environment; COMMAND gets descriptors 0-2 only. \
                COMMAND failing after reading the secret is exit 1 and counts as a failed attempt (one that never \
                read it is not counted); with --if-locked, so does COMMAND exiting 0 while CHECK still says the \
                target is locked.
                """,
                positionals: 2...Int.max,
                options: [.value("if-locked", "CHECK", "a shell command that exits 0 while the target is still locked")],
                run: SupplyCommand.supply),
        Command(kind: .askpass, synopsis: "askpass SLOT [--if-locked CHECK] [--password-stdin] [--] [PROMPT]",
                abstract: "Print a secret for SSH_ASKPASS or SUDO_ASKPASS, after the supply checks (git: the credential helper).",
                discussion: """
                The same checks as supply, then the secret on stdout. PROMPT (what the asking program passes) is \
                shown beside the PAM password prompt and recorded nowhere. Put '--' before it in wrapper scripts, \
                so a prompt that starts with '-' is not read as an option. Not for GIT_ASKPASS: git asks for the \
                username first, and askpass refuses that prompt; use 'credential.helper vaultctl' instead.
                """,
                positionals: 1...2,
                options: [.value("if-locked", "CHECK", "a shell command that exits 0 while the target is still locked")],
                run: SupplyCommand.askpass),
        Command(kind: .allowSupply, synopsis: "allow-supply SLOT on|off [--password-stdin]",
                abstract: "Allow or forbid handing a slot to other programs (turning it on needs PAM).",
                discussion: "The permission is kept on this machine (in the state folder); the default comes from the policy.",
                positionals: 2...2, options: [], run: SupplyCommand.allow),
        Command(kind: .send, synopsis: "send SLOT --to HOST TARGET [--password-stdin]",
                abstract: "Hand a secret over ssh to 'vaultctl receive TARGET' on a nearby machine, after PAM.",
                discussion: """
                The checks of supply, each refused before any prompt: the slot allows supply, this session is \
                nearby, the rate limit does not block; then PAM. Then ssh HOST (as ssh understands it; \
                VAULTCTL_SSH replaces ssh) runs the receiver, which makes its own checks (TARGET configured there, \
                this machine nearby as sshd sees it, its rate limit, the target locked) and says it is ready; only \
                then does the secret go to ssh's standard input, never to argv or the environment. Exit 0 \
                delivered and unlocked (or already unlocked: nothing sent), 77 refused with the receiver's reason, \
                75 blocked, 69 unreachable or no answer within VAULTCTL_SEND_SECONDS (default 30), 1 the receiver's \
                command did not accept it (a failed attempt on both sides).
                """,
                positionals: 2...2,
                options: [.value("to", "HOST", "the machine to send to, as ssh understands it (~/.ssh/config, host.local)")],
                run: SendCommand.send),
        Command(kind: .receive, synopsis: "receive TARGET [--print-authorized-key FILE]",
                abstract: "The receiving end of send: sshd's forced command for the sender's key.",
                discussion: """
                Runs only as command="vaultctl receive TARGET",restrict in authorized_keys (print that line with \
                --print-authorized-key SENDER-KEY.pub). TARGET is one of this machine's targets (see target add); \
                the sender never chooses what runs. Refused before any secret is read: another command or target \
                than the key's, TARGET not configured, a sender that is not nearby as sshd saw its address \
                (Tailscale or unjudgeable is remote), the rate limit, the target already unlocked. Speaks only the \
                hand-off protocol on standard output; audited here.
                """,
                positionals: 1...1,
                options: [.value("print-authorized-key", "FILE", "print the authorized_keys line for the sender's public key FILE and exit")],
                run: ReceiveCommand.receive),
        Command(kind: .targetAdd, synopsis: "target add NAME [--if-locked CHECK] -- COMMAND [ARG…]",
                abstract: "Configure what 'vaultctl receive NAME' unlocks: CHECK and the COMMAND that takes the secret.",
                discussion: """
                Kept in $XDG_CONFIG_HOME/vaultctl/targets.json (read strictly: an unknown key or version rejects \
                it, 78). CHECK (run by /bin/sh) exits 0 while the target is locked, e.g. 'test ! -e \
                /dev/mapper/data'; COMMAND gets the secret on its standard input, e.g. cryptsetup open DEVICE \
                data --key-file=-. An existing NAME is refused; remove it first.
                """,
                positionals: 2...Int.max,
                options: [.value("if-locked", "CHECK", "a shell command that exits 0 while the target is still locked")],
                run: TargetCommand.add),
        Command(kind: .targetList, synopsis: "target list",
                abstract: "List the targets this machine receives secrets for.",
                discussion: "One line per target: name, CHECK and COMMAND, tab-separated.",
                positionals: 0...0, options: [], run: TargetCommand.list),
        Command(kind: .targetRemove, synopsis: "target remove NAME",
                abstract: "Remove a target (a key bound to it is then refused).",
                discussion: "",
                positionals: 1...1, options: [], run: TargetCommand.remove),
        Command(kind: .lock, synopsis: "lock",
                abstract: "Lock the vault (and ask the Secret Service to lock its collection). No password.",
                discussion: """
                Works from anywhere and asks nothing. While locked only status, list, lock, unlock, log, help, \
                completion and policy check run; everything else is refused with 77 until 'vaultctl unlock'.
                """,
                positionals: 0...0, options: [], run: LockCommand.lock),
        Command(kind: .unlock, synopsis: "unlock [--password-stdin]",
                abstract: "Unlock the vault: needs a nearby session and PAM.",
                discussion: "",
                positionals: 0...0, options: [], run: LockCommand.unlock),
        Command(kind: .log, synopsis: "log [--json] [--limit N]",
                abstract: "Show the audit log: gated commands, refusals and supplies (never secrets).",
                discussion: """
                Without vaultctl-gate: the state folder's log ($XDG_STATE_HOME/vaultctl/audit.log): every command \
                that reads, stores, moves, deletes or hands out a secret, locks or unlocks, and each refusal, with its \
                time, slot, origin and result. With the gate, two logs in time order, each line marked: 'gate' lines are \
                vaultctl-gate's own (every answered authentication, device-slot read, store and delete, lock, unlock \
                and the gate's refusals), which no program running as you can change; 'user' lines are the state \
                folder's (the same commands as vaultctl saw them, and what never reaches the gate: the sync slot, \
                supplies, askpass, send and receive), which any program running as you can edit; --limit N is each \
                log's newest N, and a 'user' line stamped later than now is not shown. Each log keeps two generations \
                of 1 MiB, and the failures and refusals of older ones (audit.kept, its newest 1 MiB, failures kept \
                longest). Never a secret or its length. --json adds "source".
                """,
                positionals: 0...0,
                options: [.flag("json", "print JSON lines"), .value("limit", "N", "show the newest N entries (default 50)")],
                run: LogCommand.run),
        Command(kind: .policyCheck, synopsis: "policy check [FILE]",
                abstract: "Check a policy document (default: the one in effect).",
                discussion: """
                The policy (remote ranges, rate-limit numbers, per-slot defaults) is $XDG_CONFIG_HOME/vaultctl/policy.json \
                when present, else the built-in default (policy/default.json). An unknown version or key rejects the whole \
                document (78).
                """,
                positionals: 0...1, options: [], run: PolicyCommand.check),
        Command(kind: .deviceKeyStatus, synopsis: "device-key status [--json]",
                abstract: "Say what binds the device slot's key to this machine: the TPM or the machine id.",
                discussion: """
                tpm2: the key is sealed by the TPM and cannot be unsealed on any other machine, even from a \
                copied state folder. machine-id: a restored backup does not open elsewhere, a deliberate copy \
                with the same /etc/machine-id does. The TPM is VAULTCTL_TPM2_TCTI when set ('none': no TPM), \
                else /dev/tpmrm0.
                """,
                positionals: 0...0, options: [.flag("json", "print JSON")], run: DeviceKeyCommand.status),
        Command(kind: .deviceKeySeal, synopsis: "device-key seal [--password-stdin]",
                abstract: "Re-key the device slot under a new TPM-sealed key (after PAM).",
                discussion: """
                Every device slot is re-sealed, one file at a time, under a new key sealed by the TPM; the \
                machine-id key is removed last. Interrupted at any point, every slot stays readable; run it \
                again to finish.
                """,
                positionals: 0...0, options: [], run: DeviceKeyCommand.seal),
        Command(kind: .deviceKeyProtect, synopsis: "device-key protect [--password-stdin]",
                abstract: "Move a vault from before the gate into vaultctl-gate's protected store (after PAM).",
                discussion: """
                Every device slot is sealed again by vaultctl-gate in /var/lib/vaultctl, read back and \
                compared; then the vault is marked protected and the device key and slot files in the state \
                folder are removed, last. Interrupted at any point, every slot stays readable (in the state \
                folder until the end, behind the gate after); run it again to finish. Backups of the state \
                folder made before still hold the old key: delete them.
                """,
                positionals: 0...0, options: [], run: DeviceKeyCommand.protect),
        Command(kind: .help, synopsis: "help [COMMAND] [--man]",
                abstract: "Show help for vaultctl or one command.",
                discussion: "With --man, the manual page vaultctl(1) as roff, generated from the same table (read it with 'vaultctl help --man | man -l -').",
                positionals: 0...2, options: [.flag("man", "write the manual page vaultctl(1) as roff instead")], run: HelpCommand.run),
        Command(kind: .completion, synopsis: "completion bash|zsh|fish [--slots]",
                abstract: "Print the shell completion script for bash, zsh or fish.",
                discussion: """
                Generated from the same table as help. Load it with 'source <(vaultctl completion bash)' \
                (\(Installation.current.puts("all three in their standard folders"))). Slot names come from 'vaultctl completion --slots': the \
                device slot files and the mode record only, so completing never prompts, never reads a secret and \
                never waits for the Secret Service.
                """,
                positionals: 0...1,
                options: [.flag("slots", "print the slot names completion offers (device slots and recorded names), one per line")],
                run: CompletionCommand.run),
        Command(kind: .credentialGet, synopsis: "credential get [--mode device|sync]",
                abstract: "git credential helper: answer git's request after a fresh PAM authentication.",
                discussion: """
                Use with 'git config --global credential.helper vaultctl' (git runs git-credential-vaultctl, \
                installed beside vaultctl). Reads git's description (protocol, host, username; other keys are \
                ignored) from standard input and prints username and password from slot \
                git_PROTOCOL_USER@HOST, after PAM (rate-limited, audited). Nothing stored: an empty answer, so git \
                asks its next helper or you. Without a username, the first stored user for that host.
                """,
                positionals: 0...0, options: [credentialModeOption], run: CredentialCommand.get),
        Command(kind: .credentialStore, synopsis: "credential store [--mode device|sync]",
                abstract: "git credential helper: keep the credential git approved.",
                discussion: """
                Stores git's password in slot git_PROTOCOL_USER@HOST (characters other than letters, digits, \
                '.' and '-' as +HH), in the device slot unless the helper was configured with --mode sync \
                ('credential.helper "vaultctl --mode sync"'). The path is not part of the name. A slot that                 holds a value is kept as it is (replacing one needs your password: git's reject erases it first).
                """,
                positionals: 0...0, options: [credentialModeOption], run: CredentialCommand.store),
        Command(kind: .credentialErase, synopsis: "credential erase [--mode device|sync]",
                abstract: "git credential helper: forget the credential git rejected, if it matches.",
                discussion: """
                Deletes slot git_PROTOCOL_USER@HOST (every user's, when git names none) only when it holds the \
                password git rejected (compared inside vaultctl, never printed, after PAM); a newer value stays.                 Without a password from git, nothing is erased.
                """,
                positionals: 0...0, options: [credentialModeOption], run: CredentialCommand.erase),
    ]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }

    /// The command the first words name (two-word commands such as `recovery show` first), and how many
    /// words its name took.
    static func match(_ words: [String]) -> (Command, Int)? {
        if words.count >= 2, let c = named("\(words[0]) \(words[1])") { return (c, 2) }
        if let first = words.first, let c = named(first) { return (c, 1) }
        return nil
    }

    /// Whether `word` starts a group of commands (`recovery`).
    static func isGroup(_ word: String) -> Bool { all.contains { $0.name.hasPrefix("\(word) ") } }
}
