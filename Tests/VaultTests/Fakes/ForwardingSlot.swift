import Slots

/// A `Slot` that passes its calls to a `FakeSlot`: the base of a test's own slot that changes one answer
/// (a look that waits, or says it has begun) and keeps the fake's values, switches and log for the rest.
class ForwardingSlot: Slot, @unchecked Sendable {  // @unchecked: the fake it wraps is, and this adds no state
    let mode: SlotMode
    let inner: FakeSlot

    init(_ inner: FakeSlot) {
        mode = inner.mode
        self.inner = inner
    }

    func holding(_ name: SlotName) -> Holding { inner.holding(name) }
    func read(_ name: SlotName) throws(SlotError) -> SecretBytes { try inner.read(name) }
    func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) { try inner.write(name, secret) }
    func delete(_ name: SlotName) throws(SlotError) -> Bool { try inner.delete(name) }
    func names() throws(SlotError) -> [SlotName] { try inner.names() }
    func binding(of name: SlotName) -> String? { inner.binding(of: name) }
}
