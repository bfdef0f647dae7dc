import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl completion bash|zsh|fish` (the script) and `vaultctl completion --slots` (the names it offers).
enum CompletionCommand {
    static func run(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        if args.has("slots") {
            guard args.positionals.isEmpty else { throw .usage("'completion --slots' takes no shell.") }
            for name in slotNames(context) { Output.out("\(name)\n") }
            return
        }
        switch args.positionals.first {
        case "bash": Output.out(BashCompletion.script)
        case "zsh": Output.out(ZshCompletion.script)
        case "fish": Output.out(FishCompletion.script)
        case nil: throw .usage("'completion' needs a shell: bash, zsh or fish.")
        case let other?: throw .usage("'completion' knows bash, zsh and fish, not '\(other)'.")
        }
    }

    /// The slot names from local metadata only: the device slot's files and the names in the mode record
    /// (which also names sync slots). No D-Bus, no PAM, no secret read, no lock taken: completing never
    /// waits. What cannot be read (an unsafe folder, a damaged record) contributes nothing. Names kept for
    /// vaultctl's own values (`vaultctl.*`) are left out, as `list` leaves them out.
    static func slotNames(_ context: Context) -> [String] {
        let device = SealedFileSlot(folder: context.locations.state, machine: MachineIdentity(id: []))
        var names = Set((try? device.names()) ?? [])
        if let recorded = try? ModeRecord(folder: context.locations.config).load() {
            names.formUnion(recorded.keys)
        }
        return names.filter { !$0.isReserved }.map(\.rawValue).sorted()
    }
}
