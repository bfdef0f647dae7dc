import Slots
/// An option a command accepts: `--name value`, `--name=value`, or a flag `--name`.
struct OptionSpec: Sendable {
    let name: String
    /// nil for a flag; otherwise the placeholder shown in help.
    let value: String?
    /// Allowed values, when the set is fixed.
    let choices: [String]
    let help: String

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, choices: [], help: help)
    }

    static func value(_ name: String, _ placeholder: String, choices: [String] = [], _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: placeholder, choices: choices, help: help)
    }
}

/// The parsed words after the command name.
struct ParsedArguments {
    var positionals: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []
    /// How many positionals came before `--`, when there was one.
    var positionalsBeforeDashDash: Int?

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// Splits words into options and positionals for one command; `--` ends the options.
enum ArgumentParser {
    static func parse(_ words: [String], for command: Command) throws(CommandFailure) -> ParsedArguments {
        var out = ParsedArguments()
        var i = 0
        var optionsEnded = false
        while i < words.count {
            let word = words[i]
            i += 1
            if optionsEnded || !word.hasPrefix("--") || word == "-" {
                if !optionsEnded && word.hasPrefix("-") && word != "-" {
                    throw .usage("Unknown option \(Quote.text(word)) for '\(command.name)'.")
                }
                out.positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                out.positionalsBeforeDashDash = out.positionals.count
                continue
            }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = command.options.first(where: { $0.name == name }) else {
                throw .usage("Unknown option \(Quote.text("--" + name)) for '\(command.name)'.")
            }
            if spec.value == nil {
                guard inline == nil else { throw .usage("Option '--\(name)' takes no value.") }
                out.flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < words.count else { throw .usage("Option '--\(name)' needs a value (\(spec.value!)).") }
                value = words[i]
                i += 1
            }
            if !spec.choices.isEmpty && !spec.choices.contains(value) {
                throw .usage("Option '--\(name)' takes \(spec.choices.joined(separator: " or ")), not \(Quote.text(value)).")
            }
            out.options[name] = value
        }
        let range = command.positionals
        guard range.contains(out.positionals.count) else {
            if out.positionals.count > range.upperBound {
                throw .usage("Too many arguments for '\(command.name)' (usage: vaultctl \(command.synopsis)). Secrets are never taken from arguments.")
            }
            throw .usage("Missing arguments for '\(command.name)' (usage: vaultctl \(command.synopsis)).")
        }
        return out
    }
}
