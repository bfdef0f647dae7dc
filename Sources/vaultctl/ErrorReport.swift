import Slots
import Vault

/// The one place errors become words and exit codes.
enum ErrorReport {
    static func failure(_ error: VaultError) -> CommandFailure {
        switch error {
        case .slot(let e): return failure(e)
        case .couldNotLook(let name, let e):
            let why: String
            switch e {
            case .serviceUnavailable(let reason), .locked(let reason): why = reason
            default: why = SlotErrorText.describe(e)
            }
            return CommandFailure(code: .unavailable, message:
                "Slot '\(name)' is not in the device slot, and the Secret Service could not be asked: \(why). It may be there; try again when the keyring is reachable.")
        case .authenticationFailed(let why):
            return CommandFailure(code: .denied, message: "Authentication failed: \(why).")
        case .authenticationUnavailable(let why):
            return CommandFailure(code: .config, message: "Authentication is not possible: \(why).")
        case .configuration(let path, let detail):
            return CommandFailure(code: .config, message: "\(path): \(detail).")
        case .badInput(let why):
            return CommandFailure(code: .dataError, message: why)
        }
    }

    static func failure(_ error: SlotError) -> CommandFailure {
        let code: ExitCode
        switch error {
        case .empty: code = .noInput
        case .badSecretSize, .foreignMachine, .wrongSlot, .tampered: code = .dataError
        case .unsafePermissions: code = .config
        case .serviceUnavailable, .locked: code = .unavailable
        case .io: code = .failure
        }
        return CommandFailure(code: code, message: SlotErrorText.describe(error))
    }
}
