#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Runs an askpass program (the `SSH_ASKPASS` convention): the prompt is its only argument, the answer is
/// the first line of its standard output, and a non-zero exit means the person declined.
public enum Askpass {
    public enum Failure: Error, Equatable {
        case couldNotRun(String, Int32)
        case declined(String, Int32)
        case tooLong
    }

    public static func ask(program: String, prompt: String, limit: Int) -> Result<SecretBytes, Failure> {
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
        let outcome = SecretReader.read(fd: out.read, limit: limit, stopAtNewline: true)
        // Drain what follows the first line, so the program is not killed by SIGPIPE.
        let scratch = SecretBytes(capacity: 4096)
        while true {
            let n = scratch.withUnsafeMutableBytes { raw, _ in Glibc.read(out.read, raw.baseAddress!, raw.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
        }
        scratch.wipe()
        close(out.read)
        let code = Spawn.wait(pid)
        guard code == 0 else { return .failure(.declined(program, code)) }
        switch outcome {
        case .bytes(let s): return .success(s)
        case .tooLong: return .failure(.tooLong)
        case .failed(let e): return .failure(.couldNotRun(program, e))
        }
    }
}
