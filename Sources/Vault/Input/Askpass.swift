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
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return .failure(.couldNotRun(program, errno)) }
        _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup(prompt), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, program, &actions, nil, argv, environ)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            return .failure(.couldNotRun(program, rc))
        }
        let outcome = SecretReader.read(fd: pipeFDs[0], limit: limit, stopAtNewline: true)
        // Drain what follows the first line, so the program is not killed by SIGPIPE.
        let scratch = SecretBytes(capacity: 4096)
        while true {
            let n = scratch.withUnsafeMutableBytes { raw, _ in Glibc.read(pipeFDs[0], raw.baseAddress!, raw.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
        }
        scratch.wipe()
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard code == 0 else { return .failure(.declined(program, code)) }
        switch outcome {
        case .bytes(let s): return .success(s)
        case .tooLong: return .failure(.tooLong)
        case .failed(let e): return .failure(.couldNotRun(program, e))
        }
    }
}
