import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl target add|list|remove`: the receiver's own list of what `vaultctl receive NAME` unlocks.
enum TargetCommand {
    static func add(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        guard let split = args.positionalsBeforeDashDash, split == 1, args.positionals.count > 1 else {
            throw .usage("'target add' needs the name, then '--', then the command that takes the secret on its standard input (usage: vaultctl \(CommandTable.named("target add")!.synopsis)).")
        }
        let name = try targetName(args.positionals[0])
        context.auditedSubject = "target '\(name)'"
        let command = Array(args.positionals[1...])
        guard !command[0].isEmpty else { throw .usage("The command after '--' is empty.") }
        switch Spawn.resolve(command[0]) {
        case nil:
            throw .usage("\(Quote.text(command[0])) is not a program (not found\(command[0].contains("/") ? "" : " in PATH")); nothing was changed.")
        case (let path, false)?:
            throw CommandFailure(code: .unavailable, message: "\(Quote.text(path)) cannot be run (it is not executable); nothing was changed.")
        default:
            break
        }
        let check = args.options["if-locked"]
        if check?.isEmpty == true { throw .usage("--if-locked needs a command line that exits 0 while the target is locked.") }
        do {
            try TargetList(configFolder: context.locations.config).add(Target(name: name, check: check, command: command))
        } catch {
            throw ErrorReport.failure(error)
        }
        if check == nil {
            Output.message("target '\(name)' has no --if-locked check: a secret is delivered whether or not it is locked, and an exit 0 counts as unlocked.")
        }
    }

    static func list(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let targets: [Target]
        do { targets = try TargetList(configFolder: context.locations.config).all() } catch { throw ErrorReport.failure(error) }
        for t in targets {
            let command = t.command.map { Quote.text($0) }.joined(separator: " ")
            Output.out("\(t.name)\tif-locked: \(t.check.map { Quote.text($0) } ?? "-")\tcommand: \(command)\n")
        }
    }

    static func remove(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let name = try targetName(args.positionals[0])
        context.auditedSubject = "target '\(name)'"
        let removed: Bool
        do { removed = try TargetList(configFolder: context.locations.config).remove(name) } catch { throw ErrorReport.failure(error) }
        guard removed else { throw CommandFailure(code: .noInput, message: "No target '\(name)' is configured; nothing was changed (see 'vaultctl target list').") }
    }

    static func targetName(_ raw: String) throws(CommandFailure) -> String {
        guard Target.isValidName(raw) else { throw .usage("\(Quote.text(raw)) is not a valid target name: \(Target.nameRule).") }
        return raw
    }
}
