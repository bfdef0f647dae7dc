import JSON
import GateProtocol
import Slots
import VaultRules
import Vault

/// `vaultctl device-key status [--json]` and `vaultctl device-key seal`: which key binds the device slot,
/// and moving it under the TPM.
enum DeviceKeyCommand {
    static func status(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        let protection = try context.protection()
        if case .gate(let client) = protection {
            // The key is in the gate's store, which this process cannot read: the gate says what binds it.
            let reply: String
            do { reply = try client.request(.deviceKey).withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } catch {
                throw ErrorReport.failure(error)
            }
            let parts = reply.split(separator: "\t", maxSplits: 1).map(String.init)
            let binding = parts.first ?? "none"
            let tpm = parts.count > 1 && parts[1] != "none" ? parts[1] : nil
            var message: String
            switch binding {
            case DeviceKeyBinding.tpm2.rawValue:
                message = "The device key is in vaultctl-gate's protected store (/var/lib/vaultctl), sealed by a TPM: only the gate can read it, and it cannot be unsealed on any other machine. The gate reaches the TPM through \(tpm.map { "'\($0)'" } ?? "none now") (/etc/vaultctl/gate.conf); whether it answers is not checked here (the next read says)."
            case DeviceKeyBinding.machineID.rawValue:
                message = "The device key is in vaultctl-gate's protected store (/var/lib/vaultctl), which only the gate can read; it is bound to this machine's id (/etc/machine-id), not sealed by a TPM."
                if let tpm { message += " The gate has a TPM (\(tpm)) for new keys; this one stays as it is." }
            default:
                message = tpm.map { "No device key yet; the gate will seal the first one by the TPM (\($0))." }
                    ?? "No device key yet; the gate has no TPM (/etc/vaultctl/gate.conf), so the first one will be bound to the machine id."
            }
            message += " " + protection.sentence
            let pam = PAMStack.read()
            if let pam { message += " " + pam.sentence }
            if args.has("json") {
                Output.out("{\"binding\":\(binding == "none" ? "null" : JSON.string(binding)),\"boundary\":\"gate\",\"message\":\(JSON.string(message)),\"pam\":\(pam?.json ?? "null"),\"tpm\":\(tpm.map(JSON.string) ?? "null")}\n")
            } else {
                Output.out("\(binding): \(message)\n")
            }
            return
        }
        guard let device = vault.sealedDevice else { throw CommandFailure(code: .failure, message: "The device slot is not a sealed-file slot.") }
        let state: SealedFileSlot.KeyState
        do { state = try device.keyState() } catch { throw ErrorReport.failure(error) }
        let tpm = device.tpm
        let binding = state.binding
        var message: String
        switch binding {
        case .tpm2?:
            // Said from the key's own files: whether that TPM answers now is not asked here (the next read does).
            message = "The device key is sealed by a TPM: it cannot be unsealed on any other machine, even from a copy of the state folder. No PCR policy is set, so firmware and kernel updates do not lock it. vaultctl reaches the TPM through \(tpm.map { "'\($0.tcti)'" } ?? "none now (\(TPMChoice.noneReason))"); whether it answers is not checked here (the next read says)."
        case .machineID?:
            message = "The device key is bound to this machine's id (/etc/machine-id): a restored backup does not open elsewhere, but a deliberate copy of the state folder to a machine with the same id does."
            if state.unfinished {
                message += " A move under the TPM was started and not finished (\(Self.slots(state.machineIDSlots)) still under the machine-id key); run 'vaultctl device-key seal' again, with that TPM reachable, to finish it."
            } else if tpm != nil {
                message += " vaultctl can open a TPM here (\(tpm!.tcti), not asked whether it answers): 'vaultctl device-key seal' moves the key under it."
            } else {
                message += " It cannot be moved under a TPM here: \(TPMChoice.noneReason)."
            }
        case nil:
            message = tpm.map { "No device key yet; the first device-slot store will seal one by the TPM (\($0.tcti))." }
                ?? "No device key yet; the first device-slot store will bind one to the machine id, since vaultctl cannot use a TPM here: \(TPMChoice.noneReason)."
        }
        let pam = PAMStack.read()
        if let pam { message += " " + pam.sentence }
        if args.has("json") {
            let fields: [(String, String)] = [
                ("binding", binding.map { JSON.string($0.rawValue) } ?? "null"),
                ("tpm", tpm.map { JSON.string($0.tcti) } ?? "null"),
                ("tpmSlots", String(state.tpmSlots)),
                ("machineIdSlots", String(state.machineIDSlots)),
                ("unfinished", state.unfinished ? "true" : "false"),
                ("message", JSON.string(message + " " + protection.sentence)),
                ("boundary", JSON.string(protection.word)),
                ("pam", pam?.json ?? "null"),
            ]
            Output.out("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n")
        } else {
            Output.out("\(binding?.rawValue ?? "none"): \(message) \(protection.sentence)\n")
        }
    }

    static func seal(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        let vault = try context.vault()
        if case .gate(let client) = try context.protection() {
            // The gate re-keys its own store, under the TPM root chose; the password first, through it.
            let reply: String
            do throws(VaultError) {
                let state = try client.request(.deviceKey).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                if state.hasSuffix("\tnone") {
                    throw .slot(.gateHasNoTPM)
                }
                if !state.hasPrefix("tpm2\t") {
                    _ = try client.request(.authenticate(.none, reason: PromptReason.sealDeviceKey.text))
                }
                reply = try client.request(.sealDeviceKey).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            } catch {
                throw ErrorReport.failure(error)
            }
            if reply == "nothing" {
                Output.message("this vault has no device key yet: its first store makes one, sealed by vaultctl-gate's TPM; nothing changed.")
                return
            }
            let parts = reply.split(separator: " ").compactMap { Int($0) }
            guard reply != "already", parts.count == 3 else {
                Output.message("the device key already is sealed by the TPM; nothing changed.")
                return
            }
            let key = parts[1] == 1 ? "a new TPM-sealed device key" : "the TPM-sealed device key an earlier run made"
            Output.message("\(Self.slots(parts[0], "device slot")) re-sealed in vaultctl-gate's store under \(key)\(parts[2] == 1 ? "; the machine-id key was removed" : "").")
            return
        }
        let outcome: SealedFileSlot.RekeyOutcome?
        do { outcome = try vault.sealDeviceKey() } catch { throw ErrorReport.failure(error) }
        guard let outcome else {
            Output.message("the device key already is sealed by the TPM; nothing changed.")
            return
        }
        let key = outcome.createdKey ? "a new TPM-sealed device key" : "the TPM-sealed device key an earlier run made"
        Output.message("\(Self.slots(outcome.resealed, "device slot")) re-sealed under \(key)\(outcome.removedOldKey ? "; the machine-id key was removed" : "").")
    }

    /// "1 slot", "3 slots" (or with another noun).
    static func slots(_ count: Int, _ noun: String = "slot") -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
}

extension DeviceKeyCommand {
    static func protect(_ args: ParsedArguments, _ context: Context) throws(CommandFailure) {
        // The gate this command already started (to check the lock), not a second one.
        let client: GateClient
        switch try context.protection() {
        case .gate(let started), .none(_, let started?): client = started
        case .none:
            throw CommandFailure(code: .unavailable, message: "vaultctl-gate (with its group and store) is not installed beside vaultctl (../libexec/vaultctl/vaultctl-gate), so there is nothing to move the vault behind; \(Installation.current.reinstall).")
        }
        let machine = try MachineSetup.identity()
        let state = context.locations.state
        let userSide = SealedFileSlot(folder: state, machine: machine, tpm: TPMChoice.fromEnvironment())
        let outcome: GateImport.Outcome
        do {
            outcome = try GateImport.run(state: state, userSide: userSide, client: client, changeLock: "\(state)/.changes.lock")
        } catch {
            throw ErrorReport.failure(error)
        }
        if outcome.nothingToDo {
            Output.message("there is no device key or slot in \(state) to move; new device slots are sealed by vaultctl-gate already.")
            return
        }
        var said = "\(slots(outcome.moved, "device slot")) moved behind vaultctl-gate"
        if outcome.alreadyIn > 0 { said += " (\(slots(outcome.alreadyIn)) already there)" }
        if !outcome.conflicts.isEmpty {
            let names = outcome.conflicts.map { "'\($0)'" }.joined(separator: ", ")
            throw CommandFailure(code: .dataError, message: "\(said); but vaultctl-gate already holds another value for \(names), so the copies in \(state) and its device key were kept: read both, store the one you want, delete the other file, and run 'vaultctl device-key protect' again.")
        }
        Output.message("\(said); the device key and slot files in \(state) were removed. Backups of that folder made before now still hold the old key and can open the old copies: delete them.")
    }
}
