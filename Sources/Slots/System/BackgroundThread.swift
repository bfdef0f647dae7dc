#if canImport(Glibc)
import Glibc
#endif

/// Work on a thread of its own: `start` for what only warms something the command will use anyway (its
/// result is never waited for: whoever uses the warmed thing waits behind its own lock), `both` for two
/// looks that each wait on another process and can wait at the same time, `later` for work started now
/// whose result one thread takes when it needs it.
public enum BackgroundThread {
    /// What the thread runs.
    private final class Job {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// A result written by the thread and read after it was joined (the join orders the two).
    private final class Outcome<B>: @unchecked Sendable {
        var value: B?
    }

    /// Starts `job` on a new thread (which holds its own reference to it); nil when none could be made.
    private static func spawn(_ job: Job) -> pthread_t? {
        let retained = Unmanaged.passRetained(job)
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { raw in
            Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return thread
    }

    /// Starts `work` on a detached thread; false (and nothing runs) when no thread could be made.
    @discardableResult
    public static func start(_ work: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = spawn(Job(work)) else { return false }
        pthread_detach(thread)
        return true
    }

    /// Work started on a thread of its own, whose result is taken later (`value()`, which waits for it).
    public final class Later<B> {
        private let outcome = Outcome<B>()
        private var thread: pthread_t?
        private var work: (@Sendable () -> B)?

        fileprivate init(_ work: @escaping @Sendable () -> B) {
            let outcome = self.outcome
            thread = BackgroundThread.spawn(Job { outcome.value = work() })
            if thread == nil { self.work = work }
        }

        /// The result, once the thread is done (the first call waits for it); when no thread could be made,
        /// the work runs here, at the first call. From one thread only.
        public func value() -> B {
            if let thread {
                pthread_join(thread, nil)
                self.thread = nil
            } else if let work {
                outcome.value = work()
                self.work = nil
            }
            return outcome.value!
        }
    }

    /// Starts `work` on a thread of its own now; its result is taken with `value()`.
    public static func later<B>(_ work: @escaping @Sendable () -> B) -> Later<B> { Later(work) }

    /// Runs `there` on a thread of its own while `here` runs on this one, and returns both results once both
    /// are done. When no thread can be made, `there` runs here after `here`.
    public static func both<A, B>(_ here: () -> A, _ there: @escaping @Sendable () -> B) -> (A, B) {
        let outcome = Outcome<B>()
        guard let thread = spawn(Job { outcome.value = there() }) else {
            let a = here()
            return (a, there())
        }
        let a = here()
        pthread_join(thread, nil)
        return (a, outcome.value!)
    }
}
