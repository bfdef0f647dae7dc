import Foundation
@testable import VaultRules

/// A `PresenceGate` that passes or refuses on a switch, counts its calls and logs them as `gate.verify`.
///
/// `@unchecked Sendable`: `PresenceGate` requires `Sendable`; the switch, the count and the reasons are
/// read and written only while `lock` is held.
final class FakeGate: PresenceGate, @unchecked Sendable {
    private let log: OperationLog
    private let lock = NSLock()
    private var _passes: Bool
    private var _reasons: [String] = []

    init(passes: Bool = true, log: OperationLog) {
        _passes = passes
        self.log = log
    }

    /// Whether the person is taken to be present.
    var passes: Bool {
        get { locked { _passes } }
        set { locked { _passes = newValue } }
    }

    /// How many times `verify` was called.
    var calls: Int { locked { _reasons.count } }

    /// The reasons `verify` was called with, in order.
    var reasons: [String] { locked { _reasons } }

    func verify(reason: String) throws(VaultError) {
        let passes: Bool = locked {
            _reasons.append(reason)
            return _passes
        }
        if passes {
            log.note("gate.verify")
        } else {
            log.note("gate.verify failed")
            throw .authenticationFailed("the fake gate refused")
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
