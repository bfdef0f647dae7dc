#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// The receiver's side of a hand-off (`vaultctl receive TARGET`, run by sshd as a forced command): the
/// checks, each refused before any secret is read, then the secret, the last lock check, and the delivery.
///
/// In order: this is the forced command the sender asked for (``ForcedCommand``); TARGET is configured and
/// its command can run; the sender is nearby (``ReceiverOrigin``); the receiver's own rate limit does not
/// block; the target is locked (its check exits 0). Then `ready`, the secret (its length, then the bytes
/// and EOF, at most 64 KiB, within `secretSeconds`), the check again right before delivery, the command with the secret on stdin
/// (`Delivery`, as supply's COMMAND: descriptors 0-2 only, never argv or environment; its stdout and
/// stderr, and the check's, are /dev/null, as ours are the sender's channel), and the check once
/// more: still locked after an exit 0 means the secret was not accepted. A command that read the secret and
/// failed, or left the target locked, counts as a failed attempt, as it does for supply. From `ready` to the
/// result the hand-off holds a place in the rate limit (as the PAM gate's attempts do), so parallel
/// connections cannot get more secrets to the command than the limit: with every place taken, `blocked`.
public struct HandOffReceiver: Sendable {
    public let targetName: String
    public let originalCommand: String?
    public let targets: TargetList
    public let origin: Origin
    public let limiter: RateLimiter
    public let secretSeconds: Double
    /// The bounds of the lock check and of the command: the sender waits at most 120 s for the result, so
    /// the receiver never leaves a process running after the sender has given up.
    public static let checkSeconds: Double = 20
    public static let commandSeconds: Double = 100
    /// One bound for everything after the secret arrived (the check again, the command, the checks after
    /// it), below the sender's 120 s wait for the result: each gets the time left, at most its own bound.
    public static let afterSecretSeconds: Double = 110
    /// `afterSecretSeconds`, shorter in tests.
    public let afterSecretSeconds: Double

    public init(targetName: String, originalCommand: String?, targets: TargetList, origin: Origin,
                limiter: RateLimiter, secretSeconds: Double = 30,
                afterSecretSeconds: Double = HandOffReceiver.afterSecretSeconds) {
        self.afterSecretSeconds = afterSecretSeconds
        self.targetName = targetName
        self.originalCommand = originalCommand
        self.targets = targets
        self.origin = origin
        self.limiter = limiter
        self.secretSeconds = secretSeconds
    }

    /// Runs the hand-off; `say` writes `ready` to the sender, `beforeDelivery` writes the audit line that
    /// must be out before the secret goes to the command (when it throws, nothing is delivered). Returns the
    /// final line.
    public func run(input fd: Int32, say: (HandOffLine) -> Bool,
                    beforeDelivery: () throws(VaultError) -> Void) -> HandOffLine {
        if let why = ForcedCommand.refusal(target: targetName, originalCommand: originalCommand) {
            return HandOffLine(.refused, why)
        }
        let target: Target
        do throws(VaultError) {
            guard let found = try targets.named(targetName) else {
                return HandOffLine(.refused, "no target '\(targetName)' is configured here (see 'vaultctl target list')")
            }
            target = found
        } catch {
            return HandOffLine(.failed, "the receiver's targets cannot be read: \(Self.words(error))")
        }
        switch Spawn.resolve(target.command[0]) {
        case nil, (_, false)?:
            return HandOffLine(.failed, "target '\(targetName)': its command \(Quote.text(target.command[0])) cannot be run here; nothing was read")
        default:
            break
        }
        guard origin.verdict == .nearby else {
            return HandOffLine(.refused, "the connection comes from afar: \(origin.description); a secret is handed over only from this machine's local network")
        }
        do throws(VaultError) { try limiter.check() } catch {
            if case .blocked(let until, let now) = error {
                return HandOffLine(.blocked, "too many failed attempts on the receiver: blocked for \(Int((until - now).rounded(.up))) s more")
            }
            return HandOffLine(.failed, "the receiver's rate limit cannot be read: \(Self.words(error))")
        }
        // In a process group of their own, ended as a whole at a bound (a `sh -c`'s children too).
        // Quiet: the check's and the command's output would go into the protocol channel (our stdout) and
        // onto the sender's terminal (our stderr, through ssh); they go to /dev/null.
        let check = target.check.map { (program) -> TargetCheck in
            var c = TargetCheck(program: program, seconds: Self.checkSeconds)
            c.quiet = true
            c.ownGroup = true
            return c
        }
        if let check {
            let (locked, status) = check.stillLocked()
            if status == TargetCheck.timedOutStatus {
                return HandOffLine(.failed, "target '\(targetName)': its check did not finish within \(Int(Self.checkSeconds)) s; nothing was read")
            }
            guard locked else {
                return HandOffLine(.unlocked, "target '\(targetName)' is already unlocked (its check exited \(status)); nothing was sent")
            }
        }
        // A place, as the PAM gate takes one: parallel connections get no more secrets to the command than
        // the limit allows. Given back with the outcome below (a rejected secret counts).
        do throws(VaultError) { try limiter.beginAttempt() } catch {
            switch error {
            case .blocked(let until, let now):
                return HandOffLine(.blocked, "too many failed attempts on the receiver: blocked for \(Int((until - now).rounded(.up))) s more")
            case .busy:
                return HandOffLine(.blocked, "the receiver is busy with as many hand-offs as its rate limit allows at once; nothing was read")
            default:
                return HandOffLine(.failed, "the receiver's rate limit cannot be read: \(Self.words(error))")
            }
        }
        let (line, failure) = handOver(target, check, input: fd, say: say, beforeDelivery: beforeDelivery)
        guard let failure else {
            // Our own marker: were it left behind, it is dropped once this process is gone (or, after the
            // secret went to the command, counted, which errs on the safe side).
            _ = try? limiter.endAttempt(failed: false)
            return line
        }
        do throws(VaultError) {
            if let until = try limiter.endAttempt(failed: true) {
                return HandOffLine(.rejected, "\(failure). That was too many failures: the receiver is blocked for \(Int((until - limiter.clock.now()).rounded(.up))) s")
            }
        } catch {
            return HandOffLine(.rejected, "\(failure) (and the failure could not be counted: \(Self.words(error)))")
        }
        return HandOffLine(.rejected, failure)
    }

    /// From `ready` on, holding a place: the final line, or the failure to count (a rejected secret).
    private func handOver(_ target: Target, _ check: TargetCheck?, input fd: Int32, say: (HandOffLine) -> Bool,
                          beforeDelivery: () throws(VaultError) -> Void) -> (HandOffLine, failure: String?) {
        func line(_ l: HandOffLine) -> (HandOffLine, failure: String?) { (l, nil) }
        guard say(HandOffLine(.ready)) else {
            return line(HandOffLine(.failed, "the sender could not be told to go ahead"))
        }

        let secret: SecretBytes
        switch SecretReader.read(fd: fd, limit: SecretBytes.maximumCount + 8, deadline: Deadline(secondsFromNow: secretSeconds)) {
        case .bytes(let s) where s.isEmpty:
            return line(HandOffLine(.failed, "no secret arrived; nothing was delivered"))
        case .bytes(let framed):
            guard let whole = HandOffLine.unframe(framed) else {
                return line(HandOffLine(.failed, "the secret arrived cut short or malformed (not its length, then that many bytes); nothing was delivered"))
            }
            secret = whole
        case .tooLong:
            return line(HandOffLine(.failed, "the secret is longer than 64 KiB; nothing was delivered"))
        case .failed(let e):
            return line(HandOffLine(.failed, e == ETIMEDOUT ? "no secret within \(Int(secretSeconds)) s; nothing was delivered"
                                                           : "the secret could not be read (errno \(e)); nothing was delivered"))
        }
        defer { secret.wipe() }
        let phase = Deadline(secondsFromNow: afterSecretSeconds)
        if let check {
            let (stillLocked, status) = check.stillLocked(by: phase)
            if status == TargetCheck.timedOutStatus {
                return line(HandOffLine(.failed, "target '\(targetName)': its check did not finish in time; nothing was delivered"))
            }
            guard stillLocked else {
                return line(HandOffLine(.unlocked, "target '\(targetName)' was unlocked meanwhile (its check exited \(status)); nothing was delivered"))
            }
        }
        do { try beforeDelivery() } catch {
            return line(HandOffLine(.failed, "the receiver's audit log could not be written, so nothing was delivered"))
        }
        // From here a receiver killed midway counts as a failed attempt; a place that cannot say so (a full
        // disk) delivers nothing, or the command's verdict would be a free guess.
        do { try limiter.markAnswered() } catch {
            return line(HandOffLine(.failed, "the receiver could not record this attempt (is its disk full?), so nothing was delivered"))
        }
        let left = min(Self.commandSeconds, Double(phase.remainingMilliseconds) / 1000)
        let outcome = Delivery.toStdin(target.command, secret, atMost: left, quiet: true, ownGroup: true)
        if outcome.timedOut {
            return line(HandOffLine(.failed, "target '\(targetName)': \(Quote.text(target.command[0])) did not finish within \(Int(left.rounded(.up))) s and was ended; not counted as a failed attempt"))
        }
        var failure: String?
        if outcome.status != 0 {
            guard outcome.readAny else {
                return line(HandOffLine(.failed, "target '\(targetName)': \(Quote.text(target.command[0])) exited \(outcome.status) without reading the secret; not counted as a failed attempt"))
            }
            failure = "target '\(targetName)': \(Quote.text(target.command[0])) exited \(outcome.status) after reading the secret"
        } else if let check, !check.unlockedSoon(by: phase) {
            if phase.remainingMilliseconds == 0 {
                return line(HandOffLine(.failed, "target '\(targetName)': the command exited 0, but its check did not say it is unlocked within the receiver's \(Int(afterSecretSeconds)) s; not counted as a failed attempt"))
            }
            failure = "target '\(targetName)': the command exited 0 but the target is still locked (its check still exits 0), so the secret was not accepted"
        }
        guard let failure else {
            return line(HandOffLine(.delivered, "target '\(targetName)' is unlocked"))
        }
        return (HandOffLine(.rejected, failure), failure)
    }

    /// A vault error in a few plain words, for a protocol line (the CLI's own words are not reachable here).
    static func words(_ error: VaultError) -> String {
        switch error {
        case .configuration(let path, let detail): return "\(Quote.escaped(path, quotes: false)): \(detail)"
        case .slot(let e): return SlotErrorText.describe(e)
        case .lockHeld: return "another vaultctl holds a lock"
        default: return "\(error)"
        }
    }
}
