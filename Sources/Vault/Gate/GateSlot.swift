import GateProtocol
import Slots
import VaultRules

/// The device slot of a protected vault: every look and change is a request to `vaultctl-gate`, which
/// alone reaches the sealed files (in `/var/lib/vaultctl/UID`). Looks never prompt; a read, a replacing
/// store and a delete of a value need an authentication in the same exchange (the gate asks when there was
/// none).
public struct GateSlot: GatedSlot {
    public let mode = SlotMode.device
    public let client: GateClient

    public init(client: GateClient) { self.client = client }

    func look(_ name: SlotName) -> Result<GateHolding?, SlotError> {
        do throws(VaultError) {
            let reply = try client.request(.holding(name))
            let text = reply.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            guard let parsed = GateHolding.parse(text) else {
                return .failure(.gateUnavailable("its answer about slot '\(name)' is not of its protocol"))
            }
            client.lastLook = (name, .success(parsed))
            return .success(parsed)
        } catch {
            return .failure(Self.slotError(error))
        }
    }

    public func holding(_ name: SlotName) -> Holding {
        switch look(name) {
        case .success(nil): return .empty
        case .success: return .holds(locked: false)
        case .failure(let e): return .unknown(e)
        }
    }

    /// What binds a held value's key, for `status`, which has just looked (its answer is kept for this, and
    /// only this: every other question asks the gate again).
    public func binding(of name: SlotName) -> String? {
        let answer = client.lastLook.flatMap { $0.name == name ? $0.answer : nil } ?? look(name)
        guard case .success(let h?) = answer else { return nil }
        return h.binding
    }

    public func storedTag(of name: SlotName) -> [UInt8]? {
        guard case .success(let h?) = look(name), !h.tag.isEmpty else { return nil }
        return h.tag
    }

    public func gatedRead(_ name: SlotName) throws(VaultError) -> SecretBytes {
        try client.request(.read(name))
    }

    public func gatedWrite(_ name: SlotName, _ secret: SecretBytes) throws(VaultError) {
        _ = try client.request(.store(name), value: secret)
    }

    public func gatedDelete(_ name: SlotName) throws(VaultError) -> Bool {
        do { _ = try client.request(.delete(name)) } catch {
            if case .slot(.empty) = error { return false }
            throw error
        }
        return true
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        do { return try gatedRead(name) } catch { throw Self.slotError(error) }
    }

    public func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        do { try gatedWrite(name, secret) } catch { throw Self.slotError(error) }
    }

    @discardableResult
    public func delete(_ name: SlotName) throws(SlotError) -> Bool {
        do { return try gatedDelete(name) } catch { throw Self.slotError(error) }
    }

    public func names() throws(SlotError) -> [SlotName] {
        let reply: SecretBytes
        do { reply = try client.request(.names) } catch { throw Self.slotError(error) }
        let text = reply.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return try text.split(separator: "\n").map { (word) throws(SlotError) -> SlotName in
            guard let name = SlotName(String(word)) else { throw .gateUnavailable("it listed a name that is not a slot name") }
            return name
        }
    }

    /// A vault error as a slot error, for the `Slot` methods (the vault itself calls the gated ones).
    static func slotError(_ e: VaultError) -> SlotError {
        if case .slot(let s) = e { return s }
        return .gateUnavailable(Vault.reason(e))
    }
}
