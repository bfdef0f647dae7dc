#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// `device-key protect`: moves a vault made before the gate (its device key and slot files in the state
/// folder, which any program running as the user can read) into the gate's protected store.
///
/// After an authentication through the gate and under the change lock: each slot is read here and sealed
/// again by the gate (`import`, which does not yet say the vault is protected), read back through the gate
/// and compared; then the gate marks the vault protected (`finish-import`), and only then are the slot files
/// and the device key in the state folder removed, the key last. Killed at any moment, every slot stays
/// readable: from the state folder until the mark (the CLI keeps using it while the gate's vault is not
/// marked), from the gate after. Run again, it finishes: a slot the gate holds with the same value is not
/// sealed again. A slot the gate holds with another value once the vault is marked is a conflict: the
/// state folder's copy and key stay, and the outcome names it.
public enum GateImport {
    public struct Outcome: Sendable, Equatable {
        /// Slots sealed by the gate in this run.
        public var moved = 0
        /// Slots whose copy in the state folder matched the gate's already (a run that finishes another).
        public var alreadyIn = 0
        /// Slots the gate holds with another value than the state folder's copy (kept).
        public var conflicts: [SlotName] = []
        /// Whether the device key (and the slot files) in the state folder were removed.
        public var removedOldKey = false
        /// Nothing was in the state folder to move.
        public var nothingToDo = false
    }

    public static func run(state: String, userSide: SealedFileSlot, client: GateClient,
                           changeLock: String) throws(VaultError) -> Outcome {
        let wasProtected = try client.start()
        let keyFiles = ["\(state)/device.key", "\(state)/device.tpm2"]
        var outcome = Outcome()
        let before: [SlotName]
        do { before = try userSide.names() } catch { throw .slot(error) }
        guard !before.isEmpty || keyFiles.contains(where: { access($0, F_OK) == 0 }) else {
            outcome.nothingToDo = true
            return outcome
        }
        // A key sealed by the TPM is not moved under one that is not: the gate must have a TPM too.
        if access("\(state)/device.tpm2", F_OK) == 0 {
            let reply = try client.request(.deviceKey).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            if reply.hasSuffix("\tnone") {
                throw .slot(.gateUnavailable("this vault's device key is sealed by the TPM, and vaultctl-gate has no TPM (/etc/vaultctl/gate.conf; \(Installation.current.gateTPMAccess)), so moving it would bind it to the machine id only; nothing was moved"))
            }
        }
        _ = try client.request(.authenticate(.everySlot, reason: PromptReason.moveBehindGate.text))
        // Under the change lock from here, and with the marker down first: a store that waited for the lock
        // finds the marker and changes nothing (`Vault.beforeChange`), so every slot listed below is all
        // there is, and stays so.
        do throws(SlotError) { try SecureFile.ensurePrivateFolder(state) } catch { throw .slot(error) }
        let lock = try FileLock(path: changeLock, waitingAtMost: 30)
        defer { lock.release() }
        do throws(SlotError) {
            try SecureFile.write("\(state)/\(Protection.markerName)", Array("This vault's device slot is behind vaultctl-gate (/var/lib/vaultctl).\n".utf8))
        } catch { throw .slot(error) }
        let names: [SlotName]
        do { names = try userSide.names() } catch { throw .slot(error) }
        for name in names {
            let value: SecretBytes
            do { value = try userSide.read(name) } catch { throw .slot(error) }
            if case .holds = GateSlot(client: client).holding(name) {
                let held = try client.request(.read(name))
                if held.constantTimeEquals(value) {
                    outcome.alreadyIn += 1
                    continue
                }
                if wasProtected {
                    outcome.conflicts.append(name)
                    continue
                }
            }
            _ = try client.request(.importValue(name), value: value)
            guard try client.request(.read(name)).constantTimeEquals(value) else {
                throw .slot(.tampered(path: "vaultctl-gate's copy of slot '\(name)'", detail: "the value read back differs from the one sealed, so nothing in the state folder was removed"))
            }
            outcome.moved += 1
        }
        _ = try client.request(.finishImport)
        guard outcome.conflicts.isEmpty else { return outcome }
        // Listed again before anything is removed: the key goes only when every slot sealed under it is in.
        let now: [SlotName]
        do { now = try userSide.names() } catch { throw .slot(error) }
        guard Set(now).isSubset(of: Set(names)) else {
            throw .slot(.tampered(path: state, detail: "slots appeared in it while they were moved (\(Set(now).subtracting(names).map { "'\($0)'" }.sorted().joined(separator: ", "))), so its device key was kept; run 'vaultctl device-key protect' again"))
        }
        do throws(SlotError) {
            for name in names { try userSide.delete(name) }
            for file in keyFiles { _ = try SecureFile.remove(file) }
        } catch { throw .slot(error) }
        outcome.removedOldKey = true
        return outcome
    }
}
