import Slots
@testable import VaultRules

/// `VaultError` is not `Equatable`; these pick out each case's payload for `#expect`.
extension VaultError {
    var slotError: SlotError? {
        if case .slot(let error) = self { return error }
        return nil
    }

    /// The name and the reason when this is `couldNotLook`.
    var couldNotLook: (name: SlotName, reason: SlotError)? {
        if case .couldNotLook(let name, let error) = self { return (name, error) }
        return nil
    }

    var isAuthenticationFailed: Bool {
        if case .authenticationFailed = self { return true }
        return false
    }

    /// The path when this is `configuration`.
    var configurationPath: String? {
        if case .configuration(let path, _) = self { return path }
        return nil
    }

    /// True for `.slot(.locked(_))`, whatever the words.
    var isLocked: Bool {
        if case .slot(.locked) = self { return true }
        return false
    }
}
