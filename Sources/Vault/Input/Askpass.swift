#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Runs an askpass program (the `SSH_ASKPASS` convention): the prompt is its only argument, the answer is
/// the first line of its standard output, and a non-zero exit means the person declined.
///
/// Every wait is bounded: the answer must come within `answerSeconds`, else the program is killed; after the
/// first line nothing more is read (a program that keeps its stdout open, or leaves a child holding it,
/// cannot hold vaultctl and its rate-limit place), and its exit is waited for `exitGraceSeconds` at most.
/// A program that printed its line but has not exited by then is taken at its word and killed.
public enum Askpass {
    public enum Failure: Error, Equatable {
        case couldNotRun(String, Int32)
        case declined(String, Int32)
        case tooLong
        /// No line within the bound; the program was killed.
        case noAnswer(String, seconds: Int)
    }

    /// How long an askpass program has to answer (a person at a dialog).
    public static let answerSeconds: Double = 120
    /// How long its exit is waited for once the answer is in.
    static let exitGraceSeconds: Double = 2

    public static func ask(program: String, prompt: String, limit: Int,
                           answerSeconds: Double = Askpass.answerSeconds) -> Result<SecretBytes, Failure> {
        guard let out = Spawn.pipe() else { return .failure(.couldNotRun(program, errno)) }
        let started = Spawn.start([program, prompt]) { actions in
            posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        }
        close(out.write)
        guard case .success(let pid) = started else {
            close(out.read)
            if case .failure(let e) = started { return .failure(.couldNotRun(program, e.errno)) }
            return .failure(.couldNotRun(program, 0))
        }
        let outcome = SecretReader.read(fd: out.read, limit: limit, stopAtNewline: true,
                                        deadline: Deadline(secondsFromNow: answerSeconds))
        // The first line is the answer: stop reading. What it writes after that fails with EPIPE.
        close(out.read)
        if case .failed(ETIMEDOUT) = outcome {
            Spawn.kill(pid)
            return .failure(.noAnswer(program, seconds: Int(answerSeconds)))
        }
        var code: Int32
        if let exited = Spawn.wait(pid, atMost: exitGraceSeconds) {
            // Ended by SIGPIPE for writing past what was read: that is not a decline.
            code = exited == 128 + SIGPIPE ? 0 : exited
        } else {
            Spawn.kill(pid)
            code = 0
        }
        guard code == 0 else { return .failure(.declined(program, code)) }
        switch outcome {
        case .bytes(let s): return .success(s)
        case .tooLong: return .failure(.tooLong)
        case .failed(let e): return .failure(.couldNotRun(program, e))
        }
    }
}
