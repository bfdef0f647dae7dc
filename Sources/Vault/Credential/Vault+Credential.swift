import Slots

extension Vault {
    /// git's `erase`: deletes each of `names` that holds exactly `password` (compared in constant time
    /// inside this process; no stored value is returned), or each that holds a value when `password` is
    /// nil. Returns the names deleted.
    ///
    /// Comparing reads the stored values, and a read of a device slot opens the device key (with a TPM, an
    /// unseal): so it passes the presence gate first, once for all the names, and only when one of them
    /// holds a value. Without a password nothing is read.
    public func eraseCredential(_ names: [SlotName], matching password: SecretBytes?) throws(VaultError) -> [SlotName] {
        var held: [(name: SlotName, mode: SlotMode)] = []
        try steadily { () throws(VaultError) in
            for name in names {
                switch try loadMode(name) {
                case .none: continue
                case .mode(let m, _): held.append((name, m))
                case .unknown(let error):
                    switch error {
                    case .serviceUnavailable, .locked: throw .couldNotLook(name, error)
                    default: throw .slot(error)
                    }
                }
            }
        }
        guard !held.isEmpty else { return [] }
        var erased: [SlotName] = []
        if let password {
            try gate.verify(reason: "erase the credential git rejected (\(held.map { "'\($0.name)'" }.joined(separator: ", ")))")
            for (name, mode) in held {
                let same = try steadily { () throws(VaultError) -> Bool in try holds(name, in: mode, exactly: password) }
                guard same else { continue }
                do { _ = try delete(name) } catch {
                    if case .slot(.empty) = error { continue }
                    throw error
                }
                erased.append(name)
            }
            return erased
        }
        for (name, _) in held {
            do { _ = try delete(name) } catch {
                if case .slot(.empty) = error { continue }
                throw error
            }
            erased.append(name)
        }
        return erased
    }

    /// Whether `name`, found in `mode` before the prompt, holds exactly `candidate` (the caller passed the
    /// gate and holds the change lock shared); false when it is gone.
    private func holds(_ name: SlotName, in mode: SlotMode, exactly candidate: SecretBytes) throws(VaultError) -> Bool {
        let stored: SecretBytes
        do { stored = try readAfterGate(name, from: mode) } catch {
            if case .slot(.empty) = error { return false }
            throw error
        }
        return stored.constantTimeEquals(candidate)
    }
}
