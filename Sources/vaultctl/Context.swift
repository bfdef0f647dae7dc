import Slots
import Vault

/// What a command runs against: the vault built from the environment, and the output.
///
/// Built lazily so that `help` and usage errors touch no files, no bus and no PAM.
final class Context {
    private var built: Vault?

    func vault() throws(CommandFailure) -> Vault {
        if let built { return built }
        let locations = Locations.fromEnvironment()
        let machine: MachineIdentity
        do { machine = try MachineIdentity.current() } catch {
            throw CommandFailure(code: .config, message: "\(SlotErrorText.describe(error)) vaultctl binds device slots to it.")
        }
        guard let user = PAMGate.invokingUser() else {
            throw CommandFailure(code: .config, message: "Your user id has no entry in the user database, so PAM cannot authenticate you.")
        }
        let v = Vault(device: SealedFileSlot(folder: locations.state, machine: machine),
                      sync: SecretServiceSlot(),
                      record: ModeRecord(folder: locations.config),
                      gate: PAMGate(source: PasswordSource.fromEnvironment(), user: user))
        built = v
        return v
    }

    func copiedMark() -> CopiedMark {
        CopiedMark(folder: Locations.fromEnvironment().config)
    }

    func slotName(_ raw: String) throws(CommandFailure) -> SlotName {
        guard let name = SlotName(raw) else {
            throw .usage("'\(raw)' is not a valid slot name: \(SlotName.rule).")
        }
        return name
    }
}
