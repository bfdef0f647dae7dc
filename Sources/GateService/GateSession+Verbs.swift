#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// Each verb's own work, after its row of `GateRule` was applied (`GateSession.answer`): none of them checks
/// the lock, the log, the rate limit or an earlier authentication itself.
extension GateSession {
    /// What a verb whose row `settles` answers when there is nothing to do; nil: it has work.
    func settled(_ request: GateRequest) throws(VaultError) -> GatePayload? {
        switch request {
        case .unlock:
            return try vaultLock.isLocked() ? nil : Self.text("")  // not locked: nothing changes, no line
        case .sealDeviceKey:
            // No vault yet: its first store makes the key, sealed by the gate's TPM.
            guard try store.exists() else {
                guard tpm != nil else { throw .slot(.gateHasNoTPM) }
                return Self.text("nothing")
            }
            let before: SealedFileSlot.KeyState
            do { before = try slot.keyState() } catch { throw .slot(error) }
            return before.binding == .tpm2 && !before.machineIDKey ? Self.text("already") : nil  // nothing asked
        default:
            return nil
        }
    }

    /// The verb's own work.
    func work(_ request: GateRequest, value: SecretBytes?) throws(VaultError) -> GatePayload {
        switch request {
        case .holding(let name): return try holding(name)
        case .names: return try names()
        case .lock: return try lock()
        case .unlock: return try unlock()
        case .authenticate(let scope, let reason):
            try authenticate(scope, reason: reason)
            return Self.text("")
        case .read(let name): return try read(name)
        case .store(let name): return try store(name, value: value)
        case .log(let limit, let skip): return try logLines(limit: limit, skip: skip)
        case .sealDeviceKey: return try sealDeviceKey()
        case .recordFailure: return try recordFailure()
        case .deviceKey: return try deviceKey()
        case .importValue(let name): return try importValue(name, value: value)
        case .finishImport:
            log(nil, "ok")
            return Self.text("")
        case .delete(let name): return try delete(name)
        }
    }

    func holding(_ name: SlotName) throws(VaultError) -> GatePayload {
        guard try store.exists() else { return Self.text("empty") }
        let seen = slot.look(name)
        switch seen.holding {
        case .empty: return Self.text("empty")
        case .unknown(let e): throw .slot(e)
        case .holds:
            let h = GateHolding(binding: seen.binding ?? DeviceKeyBinding.machineID.rawValue, tag: seen.tag ?? [])
            return Self.text(GateHolding.text(h))
        }
    }

    func names() throws(VaultError) -> GatePayload {
        guard try store.exists() else { return Self.text("") }
        do { return Self.text(try slot.names().map(\.rawValue).joined(separator: "\n")) } catch { throw .slot(error) }
    }

    func lock() throws(VaultError) -> GatePayload {
        if try vaultLock.isLocked() { return Self.text("") }  // locked already: nothing changes, no line
        try vaultLock.lock(time: clock.now(), origin: try origin)
        log(nil, "ok")
        return Self.text("")
    }

    func unlock() throws(VaultError) -> GatePayload {
        try authenticate(.none, reason: PromptReason.unlockVault.text)
        try vaultLock.unlock()
        log(nil, "ok")
        return Self.text("")
    }

    func read(_ name: SlotName) throws(VaultError) -> GatePayload {
        try requireHeld(name)
        // A grant opens one read of the slot: a second read in this exchange asks again, so a program that
        // holds an exchange open cannot go on reading (a value stored later too) on one finger.
        if !isGranted(name) || readOnce.contains(name) {
            try authenticate(.slots([name]), reason: PromptReason.read(name).text)
        }
        let value: SecretBytes
        do { value = try slot.read(name) } catch {
            log(name, "error", reason: VaultError.reason(error))
            throw .slot(error)
        }
        // The line is in the log before the value leaves; one that cannot be written stops it.
        try append(name, "ok")
        readOnce.insert(name)
        return .secret(value)
    }

    func store(_ name: SlotName, value given: SecretBytes?) throws(VaultError) -> GatePayload {
        guard let value = given else { throw .badInput("vaultctl-gate got no value after the store request") }
        let replaces: Bool
        switch slot.holding(name) {
        case .empty: replaces = false
        case .holds, .unknown: replaces = true  // a file that cannot open here is replaced only after PAM too
        }
        let storeOverAsks = try policy.gates.storeOver
        if replaces && !isGranted(name) && storeOverAsks {
            try authenticate(.slots([name]), reason: PromptReason.replace(name).text)
        }
        return try underSlotsLock { () throws(VaultError) -> GatePayload in
            // Looked at again under the lock: a value stored meanwhile is replaced only after a password.
            if !replaces, slot.holding(name) != .empty, !isGranted(name), storeOverAsks {
                throw .changedMeanwhile(name)
            }
            if !replaces { try checkRoomForNewSlot() }
            do throws(SlotError) { try slot.write(name, value) } catch {
                log(name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log(name, replaces ? "replaced" : "ok")
            return Self.text("")
        }
    }

    func logLines(limit: Int, skip: Int) throws(VaultError) -> GatePayload {
        guard try store.exists() else { return Self.text("") }
        let entries = try audit.entries(limit: limit, skip: skip)
        // The newest lines that fit one answer.
        var lines: [String] = []
        var size = 0
        for entry in entries.reversed() {
            let line = entry.jsonLine
            if size + line.utf8.count + 1 > GateWord.ok.maximumPayload { break }
            lines.append(line)
            size += line.utf8.count + 1
        }
        return Self.text(lines.reversed().joined(separator: "\n"))
    }

    func sealDeviceKey() throws(VaultError) -> GatePayload {
        guard tpm != nil else { throw .slot(.gateHasNoTPM) }
        return try underSlotsLock { () throws(VaultError) -> GatePayload in
            let outcome: SealedFileSlot.RekeyOutcome
            do throws(SlotError) { outcome = try slot.rekeyUnderTPM() } catch {
                log(nil, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log(nil, "ok")
            return Self.text("\(outcome.resealed) \(outcome.createdKey ? 1 : 0) \(outcome.removedOldKey ? 1 : 0)")
        }
    }

    func recordFailure() throws(VaultError) -> GatePayload {
        // A line only while a failure can still count (not while blocked): a program asking again and
        // again cannot fill the log this way either.
        let counts = try limiter.blockedUntil() == nil
        let until = try limiter.recordFailure()
        if counts { log(nil, "failed", reason: "a program given a secret did not accept it") }
        return Self.text(until.map { "\($0)" } ?? "")
    }

    func deviceKey() throws(VaultError) -> GatePayload {
        var binding = "none"
        if try store.exists() {
            do { binding = try slot.keyState().binding?.rawValue ?? "none" } catch { throw .slot(error) }
        }
        return Self.text("\(binding)\t\(tpm?.tcti ?? "none")")
    }

    /// `device-key protect`: only after an authentication for every slot in this exchange (its row).
    func importValue(_ name: SlotName, value given: SecretBytes?) throws(VaultError) -> GatePayload {
        guard let value = given else { throw .badInput("vaultctl-gate got no value after the import request") }
        return try underSlotsLock { () throws(VaultError) -> GatePayload in
            if slot.holding(name) == .empty { try checkRoomForNewSlot() }
            do throws(SlotError) { try slot.write(name, value) } catch {
                log(name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            log(name, "ok")
            return Self.text("")
        }
    }

    func delete(_ name: SlotName) throws(VaultError) -> GatePayload {
        try requireHeld(name)
        if !isGranted(name), try policy.gates.delete {
            try authenticate(.slots([name]), reason: PromptReason.delete(name).text)
        }
        return try underSlotsLock { () throws(VaultError) -> GatePayload in
            let removed: Bool
            do throws(SlotError) { removed = try slot.delete(name) } catch {
                log(name, "error", reason: VaultError.reason(error))
                throw .slot(error)
            }
            // Removed by another command while this one asked: nothing was deleted here, and it says so.
            guard removed else { throw .slot(.empty(name)) }
            log(name, "ok")
            return Self.text("")
        }
    }

    /// The most slots, and bytes in slot files, one user's folder of the store holds: the store is on the
    /// system's disk (`/var/lib`), and a program running as the user could otherwise fill it with stores that
    /// need no password. 4,096 values of at most 64 KiB each, and 64 MiB in all.
    static let maximumSlots = 4096
    static let maximumSlotBytes = 64 * 1024 * 1024

    /// Refuses (77) a new slot past either bound; called under the slots' lock.
    func checkRoomForNewSlot() throws(VaultError) {
        let folder = "\(store.folder)/slots"
        let files: [String]
        do { files = try SecureFile.privateFolderExists(folder) ? try SecureFile.entries(of: folder) : [] } catch { throw .slot(error) }
        guard files.count < Self.maximumSlots else {
            throw .refused("your protected vault holds \(files.count) slots, the most vaultctl-gate keeps for one user (the store is on the system's disk); delete some first")
        }
        var bytes = 0
        var st = stat()
        for file in files where lstat("\(folder)/\(file)", &st) == 0 { bytes += Int(st.st_size) }
        guard bytes < Self.maximumSlotBytes else {
            throw .refused("your protected vault's slots take \(bytes / 1024 / 1024) MiB, the most vaultctl-gate keeps for one user (the store is on the system's disk); delete some first")
        }
    }

    /// Throws `empty` when the slot holds nothing (nothing to read or remove asks nothing), or the slot's
    /// error when it cannot be looked at.
    func requireHeld(_ name: SlotName) throws(VaultError) {
        guard try store.exists() else { throw .slot(.empty(name)) }
        switch slot.holding(name) {
        case .empty: throw .slot(.empty(name))
        case .unknown(let e): throw .slot(e)
        case .holds: return
        }
    }

}
