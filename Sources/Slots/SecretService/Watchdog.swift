import Dispatch

/// Bounds a blocking call: runs it on a worker thread and gives up after a deadline.
///
/// Every Secret Service operation goes through here, so a bus that accepts and never answers, or a prompt
/// nobody can see, becomes `SlotError.serviceUnavailable` within seconds instead of a hang. A call that
/// outlives its deadline is abandoned; its result (a `SecretBytes` is wiped on release) is dropped.
enum Watchdog {
    /// Default bound for one Secret Service operation, in seconds.
    static let seconds: Double = SecretServiceSlot.defaultTimeout

    /// Carries the result across threads. `@unchecked Sendable`: written once by the worker before it
    /// signals the semaphore, read by the waiter only after the semaphore said so, under `lock`.
    private final class Box<T>: @unchecked Sendable {
        let lock = DispatchSemaphore(value: 1)
        var value: Result<T, SlotError>?
        var abandoned = false
    }

    /// `changes`: the call changes something (store, delete, lock). A change abandoned at the deadline
    /// may still land afterwards, and the message says so rather than claiming it did not happen.
    static func run<T>(seconds: Double = Watchdog.seconds, _ what: String, changes: Bool = false,
                       _ body: @escaping @Sendable () -> Result<T, SlotError>) throws(SlotError) -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        let worker = UncheckedBody(body: body)
        DispatchQueue.global().async {
            let result = worker.body()
            box.lock.wait()
            if !box.abandoned { box.value = result }
            box.lock.signal()
            done.signal()
        }
        let finished = done.wait(timeout: .now() + seconds) == .success
        box.lock.wait()
        defer { box.lock.signal() }
        guard finished, let value = box.value else {
            box.abandoned = true
            throw .serviceUnavailable("it did not answer within \(Int(seconds)) s while \(what)"
                + (changes ? " (the change may still have been made; check with 'vaultctl status')" : ""))
        }
        return try value.get()
    }

    private struct UncheckedBody<T>: @unchecked Sendable {
        let body: @Sendable () -> Result<T, SlotError>
    }
}
