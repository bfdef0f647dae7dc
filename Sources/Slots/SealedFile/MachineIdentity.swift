/// This machine's identity as the device backend binds to it: a hash of `/etc/machine-id`.
///
/// machine-id is world-readable and not a secret: binding to it keeps a copied file from opening on another
/// machine; it does not stop a process running as the same user on this one.
public struct MachineIdentity: Sendable {
    /// The raw machine id text (trimmed), mixed into the device key.
    let id: [UInt8]

    /// Reads the machine id from `path` (default `/etc/machine-id`, then `/var/lib/dbus/machine-id`).
    public static func current(path: String? = nil) throws(SlotError) -> MachineIdentity {
        let candidates = path.map { [$0] } ?? ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        for candidate in candidates {
            guard let text = PlainFile.read(candidate, maximumCount: 4096) else { continue }
            let trimmed = Array(text.filter { $0 != 0x0A && $0 != 0x20 && $0 != 0x0D && $0 != 0x09 })
            if !trimmed.isEmpty { return MachineIdentity(id: trimmed) }
        }
        throw .io(path: candidates[0], errno: 2, operation: "read the machine id from")
    }

    /// A public 16-byte tag of this machine, written in file headers so "another machine" can be told apart
    /// from "tampered". Computed once: every look at a sealed file checks it.
    let tag: [UInt8]

    public init(id: [UInt8]) {
        self.id = id
        let message = Array("vaultctl machine tag v1\0".utf8) + id
        tag = message.withUnsafeBytes { Sodium.publicHash(count: 16, message: $0) }
    }
}
