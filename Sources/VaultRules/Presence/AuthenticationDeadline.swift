#if canImport(Glibc)
import Glibc
#endif
import Slots
import Synchronization

/// One bound on a whole PAM authentication (`prompt.authenticationSeconds`): the questions answered, a finger
/// put on the reader, a key touched. A module that waits past it cannot be interrupted from outside (libpam
/// has no cancel), so the process ends: a thread that waits for the deadline and, if PAM has not finished,
/// writes `message` (if any) on standard error and exits 75. Nothing is counted by that: an attempt that got
/// no answer leaves no failure, one that did is counted as any attempt killed after its answer.
///
/// `finish()` (PAM returned) ends the thread; it must be called, or the process ends at the deadline.
package final class AuthenticationDeadline {
    /// The exit status when the deadline passes (sysexits EX_TEMPFAIL: try again).
    package static let exitStatus: Int32 = 75

    private let wake: (read: Int32, write: Int32)
    private var thread: pthread_t?
    private let context: UnsafeMutablePointer<Context>

    package struct Context {
        var fd: Int32
        var milliseconds: Int32
        var message: UnsafeMutablePointer<UInt8>?
        var count: Int
        var beforeExit: (() -> Void)?
    }

    /// Starts the wait; nil when no thread could be made (then there is no bound beyond each question's).
    /// `beforeExit` runs on the waiting thread when the deadline passes, before the process ends.
    package init?(seconds: Int, message: String?, beforeExit: (() -> Void)? = nil) {
        guard let fds = ChildSpawn.pipe() else { return nil }
        wake = fds
        let bytes = message.map { Array(($0 + "\n").utf8) } ?? []
        let copy = bytes.isEmpty ? nil : UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        copy?.initialize(from: bytes, count: bytes.count)
        context = .allocate(capacity: 1)
        context.initialize(to: Context(fd: fds.read, milliseconds: Int32(clamping: seconds * 1000), message: copy, count: bytes.count, beforeExit: beforeExit))
        var t = pthread_t()
        guard pthread_create(&t, nil, { raw in
            let c = raw!.assumingMemoryBound(to: AuthenticationDeadline.Context.self).pointee
            let deadline = Deadline(secondsFromNow: Double(c.milliseconds) / 1000)
            while true {
                var p = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, deadline.remainingMilliseconds)
                if ready > 0 { return nil }  // finished: the write end was closed
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 && deadline.remainingMilliseconds > 0 { continue }
                c.beforeExit?()
                // A terminal prompt in progress has echo off: put it back before the process ends.
                EchoRestore.restoreNow()
                if let m = c.message { _ = write(2, m, c.count) }
                _exit(AuthenticationDeadline.exitStatus)
            }
        }, context) == 0 else {
            close(fds.read); close(fds.write)
            copy?.deallocate()
            context.deinitialize(count: 1)
            context.deallocate()
            return nil
        }
        thread = t
    }

    /// PAM returned: the thread ends, and the process goes on.
    package func finish() {
        close(wake.write)
        if let thread { pthread_join(thread, nil) }
        close(wake.read)
        context.pointee.message?.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
    }
}

/// The race between an authentication's answer and its deadline, decided once and atomically: either a
/// guess went to PAM (an answer handed over, a failure reported by a module) and the deadline may no longer
/// take the attempt's place back, or the deadline passed first and no answer may go to PAM any more.
/// A look followed by an act (the deadline's thread reading "no guess", then taking the place back) leaves a
/// window in which an answer goes to PAM between the two: judged and never counted (issue 36, point 12).
///
/// `Sendable`: its one state is an atomic, changed only by compare-and-exchange.
package final class GuessRace: Sendable {
    private static let open = 0, guessed = 1, expired = 2
    private let state = Atomic<Int>(GuessRace.open)

    /// Claims the attempt for a guess about to go to PAM: true when it may go (the deadline has not passed,
    /// and from now on it cannot take the place back), false when the deadline passed first.
    package func claimGuess() -> Bool {
        let (exchanged, original) = state.compareExchange(expected: Self.open, desired: Self.guessed, ordering: .sequentiallyConsistent)
        return exchanged || original == Self.guessed
    }

    /// The deadline passed: true when nothing was guessed (the place may be taken back, and no answer will go
    /// to PAM after this), false when a guess went to PAM first (it counts).
    package func expire() -> Bool {
        let (exchanged, original) = state.compareExchange(expected: Self.open, desired: Self.expired, ordering: .sequentiallyConsistent)
        return exchanged || original == Self.expired
    }

    /// Whether a guess went to PAM.
    package var guessed: Bool { state.load(ordering: .sequentiallyConsistent) == Self.guessed }
}
