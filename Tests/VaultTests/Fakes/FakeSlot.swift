import Foundation
import Slots

/// An in-memory `Slot` with switches that force each failure a real backend can have.
///
/// Every call is written to the shared `OperationLog` as `<mode>.<operation> <name>`, with ` failed`
/// appended when it threw. Values are kept as `SecretBytes` copies, never as `String` or `[UInt8]`.
///
/// `@unchecked Sendable`: `Slot` requires `Sendable` and `SecretBytes` is not; every stored variable
/// (values and switches) is read and written only while `lock` is held, so sharing it across threads is safe.
@dynamicMemberLookup
final class FakeSlot: Slot, @unchecked Sendable {
    let mode: SlotMode
    private let log: OperationLog
    private let lock = NSLock()
    private var values: [SlotName: SecretBytes] = [:]
    /// The device fake's stored tags, new at each write (as a sealed file's); the sync fake has none, as
    /// the Secret Service slot has none.
    private var tags: [SlotName: [UInt8]] = [:]
    private var switches = Switches()

    init(_ mode: SlotMode, log: OperationLog) {
        self.mode = mode
        self.log = log
    }

    // MARK: Switches

    /// The failures the fake is made to have, each a switch a test sets (`slot.isLocked = true`).
    struct Switches {
        /// The backend cannot be asked: `holding` answers `.unknown(error)` and every other call throws it.
        var unavailable: SlotError?
        /// The collection is locked: held values answer `.holds(locked: true)`; read, write and delete throw `.locked`.
        var isLocked = false
        var writeError: SlotError?
        var readError: SlotError?
        var deleteError: SlotError?
        var namesError: SlotError?
        /// `read` gives back the held value with its last byte changed: a backend whose read-back differs
        /// from what was written. The stored value itself is untouched.
        var garblesReads = false
        /// What `place(of:)` answers for a held name (as the Secret Service names its collection and item);
        /// nil keeps the protocol's default answer, nil.
        var placeDescription: String?
        /// What `provider()` answers (the sync slot: "KeePassXC, 'Passwords'"); nil keeps the default, nil.
        var providerDescription: String?
        /// What `binding(of:)` answers for a held name (the device slot: "tpm2" or "machine-id"); nil keeps the
        /// protocol's default answer, nil.
        var bindingName: String?
    }

    /// Each switch, read and set under the lock.
    subscript<T>(dynamicMember path: WritableKeyPath<Switches, T>) -> T {
        get { locked { switches[keyPath: path] } }
        set { locked { switches[keyPath: path] = newValue } }
    }

    // MARK: Set-up and inspection (not logged)

    /// Puts a value in place as test set-up.
    func seed(_ name: SlotName, _ text: String) {
        let copy = SecretBytes.text(text)
        locked {
            values[name] = copy
            tags[name] = Self.newTag()
        }
    }

    /// The value held for `name` as text, or nil.
    func value(of name: SlotName) -> String? {
        locked { values[name]?.text }
    }

    // MARK: Slot

    func holding(_ name: SlotName) -> Holding { look(name, loggedAs: "holding") }

    /// As `holding`, logged apart so tests see which looks came before a read.
    func holdingBeforeRead(_ name: SlotName) -> Holding { look(name, loggedAs: "holdingBeforeRead") }

    private func look(_ name: SlotName, loggedAs what: String) -> Holding {
        let answer: Holding = locked {
            if let error = switches.unavailable { return .unknown(error) }
            return values[name] == nil ? .empty : .holds(locked: switches.isLocked)
        }
        log.note("\(mode.rawValue).\(what) \(name)")
        return answer
    }

    func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        let outcome: Result<SecretBytes, SlotError> = locked {
            if let error = switches.unavailable ?? switches.readError { return .failure(error) }
            guard let value = values[name] else { return .failure(.empty(name)) }
            if switches.isLocked { return .failure(.locked("the fake collection is locked")) }
            let copy = value.withUnsafeBytes { SecretBytes(copying: $0) }
            if switches.garblesReads {
                copy.withUnsafeMutableBytes { raw, used in
                    if used > 0 { raw[used - 1] ^= 0xFF }
                }
            }
            return .success(copy)
        }
        return try logged("read", name, outcome)
    }

    func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        let copy = secret.withUnsafeBytes { SecretBytes(copying: $0) }
        let outcome: Result<Void, SlotError> = locked {
            if let error = switches.unavailable ?? switches.writeError { return .failure(error) }
            if switches.isLocked { return .failure(.locked("the fake collection is locked")) }
            values[name] = copy
            tags[name] = Self.newTag()
            return .success(())
        }
        try logged("write", name, outcome)
    }

    @discardableResult
    func delete(_ name: SlotName) throws(SlotError) -> Bool {
        let outcome: Result<Bool, SlotError> = locked {
            if let error = switches.unavailable ?? switches.deleteError { return .failure(error) }
            if switches.isLocked && values[name] != nil { return .failure(.locked("the fake collection is locked")) }
            return .success(values.removeValue(forKey: name) != nil)
        }
        return try logged("delete", name, outcome)
    }

    func names() throws(SlotError) -> [SlotName] {
        let outcome: Result<[SlotName], SlotError> = locked {
            if let error = switches.unavailable ?? switches.namesError { return .failure(error) }
            return .success(Array(values.keys))
        }
        return try logged("names", outcome)
    }

    func storedTag(of name: SlotName) -> [UInt8]? {
        let answer: [UInt8]? = locked {
            guard mode == .device, switches.unavailable == nil, values[name] != nil else { return nil }
            return tags[name]
        }
        log.note("\(mode.rawValue).storedTag \(name)")
        return answer
    }

    private static func newTag() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    func binding(of name: SlotName) -> String? {
        locked { values[name] == nil ? nil : switches.bindingName }
    }

    func provider() -> String? {
        log.note("\(mode.rawValue).provider")
        return locked { switches.providerDescription }
    }

    func place(of name: SlotName) -> String? {
        let answer: String? = locked { values[name] == nil ? nil : switches.placeDescription }
        log.note("\(mode.rawValue).place \(name)")
        return answer
    }

    // MARK: Helpers

    private func logged<T>(_ operation: String, _ name: SlotName, _ outcome: Result<T, SlotError>) throws(SlotError) -> T {
        try logged("\(operation) \(name)", outcome)
    }

    /// Notes `<mode>.<what>` in the log, with ` failed` when `outcome` is an error, and gives the outcome.
    private func logged<T>(_ what: String, _ outcome: Result<T, SlotError>) throws(SlotError) -> T {
        switch outcome {
        case .success(let value):
            log.note("\(mode.rawValue).\(what)")
            return value
        case .failure(let error):
            log.note("\(mode.rawValue).\(what) failed")
            throw error
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
