import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl policy check [FILE]`.
enum PolicyCommand {
    static func check(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let policy: Policy
        let source: String
        do {
            if let file = args.positionals.first {
                policy = try Policy.check(file: file)
                source = Quote.escaped(file, quotes: false)
            } else if case .gate = try context.protection() {
                // Behind the gate: root's policy tightened by the user's, for the gate and this side alike.
                policy = try context.policy()
                source = "the policy in effect (\(RootPolicy.path) or the built-in one, tightened by yours)"
            } else {
                policy = try context.policy()
                source = "the policy in effect"
            }
        } catch let e as CommandFailure {
            throw e
        } catch {
            throw ErrorReport.unexpected(error)
        }
        let r = policy.rateLimit
        Output.out("""
        \(source) is valid.
          remote ranges: \(policy.remoteRanges.map(\.description).joined(separator: ", "))
          nearby ranges: \(policy.nearbyRanges.map(\.description).joined(separator: ", "))
          rate limit:    \(r.failures) failures within \(r.windowSeconds) s block for \(r.blockSeconds) s
          supply allowed by default: \(policy.allowSupplyByDefault ? "yes" : "no")
          askpass answer within: \(policy.askpassSeconds) s
          whole authentication within: \(policy.authenticationSeconds) s
          password before a store over a value: \(policy.gates.storeOver ? "yes" : "no"); before a delete: \(policy.gates.delete ? "yes" : "no")

        """)
    }
}
