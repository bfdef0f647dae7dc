import Slots
import VaultRules

/// What the CLI asks `vaultctl-gate` to do: the payload of a `request` frame, `1 VERB[ SLOT][ REASON]`
/// (version 1; a slot name by `SlotName`'s rule; for `authenticate`, a `GateScope`). Several requests may
/// follow one another on one exchange, which lasts one command of the CLI; a person who authenticated for a
/// slot in it is not asked again in it for that slot, and is asked for any other.
public enum GateRequest: Equatable, Sendable {
    /// Whether the device slot holds `SLOT`, its key's binding and its stored tag: no prompt.
    case holding(SlotName)
    /// The device slot's names: no prompt.
    case names
    /// The value, after a fresh authentication (unless this exchange had one for the slot).
    case read(SlotName)
    /// Seals the `secret` frame that follows as the slot's value; asks first when it replaces one.
    case store(SlotName)
    /// Removes the slot's value; asks first when there is one.
    case delete(SlotName)
    /// A fresh authentication (lock check, rate limit, PAM, audit line) that opens `scope` for the rest of
    /// the exchange: the slots a command reads or changes after one prompt (a `move`, a `credential erase`),
    /// or a sync slot's read that happens outside the gate. `reason` is shown in the prompt and logged as the
    /// CLI said it, followed by the gate's own words for the scope whenever the reason does not name exactly
    /// those slots (a caller cannot show "read slot 'a'" and open slot 'b').
    case authenticate(GateScope, reason: String)
    /// Locks the vault: no gated request runs until `unlock`. No prompt.
    case lock
    /// Unlocks it, after a fresh authentication.
    case unlock
    /// `device-key protect`: seals the `secret` frame that follows as the slot's value, after an
    /// authentication in this exchange, without saying the vault is protected yet.
    case importValue(SlotName)
    /// `device-key protect`, once every slot is in: from now on the vault is protected.
    case finishImport
    /// The last lines (at most this many, and at most 64 KiB) of the gate's audit log, after leaving out the
    /// newest `skip` (the lines an earlier answer gave): no prompt. `1 log N` is `skip` 0.
    case log(Int, skip: Int = 0)
    /// What binds the gate's device key (`tpm2`, `machine-id`, or `none` yet), a tab, and the TPM the gate
    /// is configured with (a TCTI, or `none`): no prompt.
    case deviceKey
    /// Counts a failure that is not PAM's (a supplied program failed, an askpass request came back): the
    /// end of the block it started, if any. No prompt: it can only make the limit stricter.
    case recordFailure
    /// `device-key seal` of a protected vault: the gate re-keys its store under the TPM of gate.conf, after
    /// an authentication in this exchange. Answers `RESEALED CREATED REMOVED` (a count, then 0 or 1 twice),
    /// or `already` when every slot is under a TPM-sealed key.
    case sealDeviceKey

    /// Whether the gate may ask the person (PAM) while it answers.
    public var mayAsk: Bool {
        switch self {
        case .read, .store, .delete, .authenticate, .unlock: return true
        case .holding, .names, .lock, .importValue, .finishImport, .log, .deviceKey, .recordFailure, .sealDeviceKey: return false
        }
    }

    public static let version = "1"
    static let maximumReason = 512

    public var verb: String {
        switch self {
        case .holding: return "holding"
        case .names: return "names"
        case .read: return "read"
        case .store: return "store"
        case .delete: return "delete"
        case .authenticate: return "authenticate"
        case .lock: return "lock"
        case .unlock: return "unlock"
        case .importValue: return "import"
        case .finishImport: return "finish-import"
        case .log: return "log"
        case .deviceKey: return "device-key"
        case .recordFailure: return "record-failure"
        case .sealDeviceKey: return "seal-device-key"
        }
    }

    /// Reads a request's payload; nil when it is not one of version 1.
    public static func parse(_ text: String) -> GateRequest? {
        guard text.utf8.count <= 4096, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return nil }
        let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard words.count >= 2, words[0] == version else { return nil }
        let verb = words[1]
        func slot(_ at: Int) -> SlotName? { words.count > at ? SlotName(words[at]) : nil }
        switch (verb, words.count) {
        case ("names", 2): return .names
        case ("lock", 2): return .lock
        case ("unlock", 2): return .unlock
        case ("finish-import", 2): return .finishImport
        case ("device-key", 2): return .deviceKey
        case ("record-failure", 2): return .recordFailure
        case ("seal-device-key", 2): return .sealDeviceKey
        case ("import", 3): return slot(2).map { .importValue($0) }
        case ("log", 3), ("log", 4):
            // Decimal, no sign and no leading zero: a count from 1 to 100,000; a skip from 1 to 1,000,000.
            func number(_ digits: String, _ range: ClosedRange<Int>) -> Int? {
                guard !digits.isEmpty, digits.count <= 7, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.first != "0",
                      let n = Int(digits), range.contains(n) else { return nil }
                return n
            }
            guard let n = number(words[2], 1...100_000) else { return nil }
            guard words.count == 4 else { return .log(n) }
            return number(words[3], 1...1_000_000).map { .log(n, skip: $0) }
        case ("holding", 3): return slot(2).map { .holding($0) }
        case ("read", 3): return slot(2).map { .read($0) }
        case ("store", 3): return slot(2).map { .store($0) }
        case ("delete", 3): return slot(2).map { .delete($0) }
        case ("authenticate", 4):
            let reason = words[3]
            guard !reason.isEmpty, reason.utf8.count <= maximumReason, clean(reason) == reason else { return nil }
            return GateScope.parse(words[2]).map { .authenticate($0, reason: reason) }
        default: return nil
        }
    }

    /// A reason made one protocol field: control characters become spaces, cut to 512 bytes on a character
    /// boundary, never empty.
    package static func clean(_ text: String) -> String {
        let out = OneLineText.clean(text, maxBytes: maximumReason)
        return out.isEmpty ? "authenticate" : out
    }
}
