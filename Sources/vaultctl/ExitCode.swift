/// The exit codes vaultctl documents (sysexits.h).
enum ExitCode: Int32, CaseIterable {
    case ok = 0
    case failure = 1
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case tryLater = 75
    case denied = 77
    case config = 78

    var meaning: String {
        switch self {
        case .ok: return "success"
        case .failure: return "anything else"
        case .usage: return "usage error: unknown command or option, bad slot name, a name kept for vaultctl's own values ('vaultctl.…') given to a command that changes a slot or hands its value on (store, move, delete, supply, allow-supply, askpass, send), a secret given as an argument"
        case .dataError: return "bad data: empty or oversized secret, the two entries of a typed secret differ, tampered file, a protected vault's key made for another account, file sealed on another machine or for another slot, device key sealed to another TPM or its TPM blobs damaged"
        case .noInput: return "the slot is empty"
        case .unavailable: return "the Secret Service is unavailable or locked, or could not be asked; or the TPM that sealed the device key is not available (or the vaultctl-tpm helper is missing); or no clipboard for read --clip"
        case .tryLater: return "temporarily blocked (the rate limit, or the TPM's dictionary-attack lockout, with the time to wait), or another vaultctl holds a lock past the wait; try again later"
        case .denied: return "authentication failed or refused, or no way to ask for it"
        case .config: return "bad configuration: unsafe file permissions (vaultctl's files, or a vaultctl-tpm helper others could replace), invalid record, a value recorded in the fleet while no fleet is configured, PAM misconfigured"
        }
    }
}
