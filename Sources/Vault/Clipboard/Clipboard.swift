#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// Copies a secret to the clipboard through a `ClipboardTool`, reads back what the clipboard holds, and
/// clears it. Every run of a tool is bounded (a display that never answers is given up on, the tool
/// killed); the secret passes through a pipe to the tool's standard input, never its arguments or
/// environment.
public struct Clipboard: Sendable {
    public let tool: ClipboardTool
    /// How long one run of the tool may take.
    static let toolTimeout: Int32 = 5

    public init(tool: ClipboardTool) {
        self.tool = tool
    }

    /// Puts `secret` on the clipboard; nil on success, else why not.
    public func copy(_ secret: SecretBytes) -> String? {
        let status = run(tool.copyArguments, input: secret)
        return status == 0 ? nil : "\(tool.kind.rawValue) could not set the clipboard (exit status \(status))"
    }

    /// Sets the clipboard to nothing.
    @discardableResult
    func clear() -> Bool { run(tool.clearArguments, input: nil) == 0 }

    /// Sets the clipboard to nothing at once (when the delayed clear could not be arranged).
    public func clearNow() { clear() }

    /// What the clipboard holds now (at most `SecretBytes.maximumCount` bytes), or nil when it could not be read.
    func contents() -> SecretBytes? {
        guard let output = Spawn.pipe(), let null = openNull() else { return nil }
        defer { close(null) }
        let started = Spawn.start(tool.pasteArguments) { actions in
            posix_spawn_file_actions_adddup2(&actions, null, 0)
            posix_spawn_file_actions_adddup2(&actions, output.write, 1)
            posix_spawn_file_actions_adddup2(&actions, null, 2)
        }
        close(output.write)
        guard case .success(let pid) = started else {
            close(output.read)
            return nil
        }
        let deadline = Deadline(secondsFromNow: Double(Self.toolTimeout))
        let buffer = SecretBytes(capacity: SecretBytes.maximumCount + 1)
        var complete = false
        buffer.withUnsafeMutableBytes { raw, used in
            while used < raw.count {
                var pfd = pollfd(fd: output.read, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, deadline.remainingMilliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return }
                let n = read(output.read, raw.baseAddress! + used, raw.count - used)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { complete = n == 0; return }
                used += n
            }
        }
        close(output.read)
        let status = Self.wait(pid, seconds: Self.toolTimeout)
        guard complete, status == 0, buffer.count <= SecretBytes.maximumCount else { return nil }
        return buffer
    }

    /// Runs `argv` with `input` (or nothing) on its standard input and the output discarded; its status,
    /// or 127 when it could not start or did not finish in time.
    func run(_ argv: [String], input: SecretBytes?) -> Int32 {
        guard let stdin = ChildSpawn.pipe(holding: input?.count ?? 0), let null = openNull() else { return 127 }
        defer { close(null) }
        let started = Spawn.start(argv) { actions in
            posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
            posix_spawn_file_actions_adddup2(&actions, null, 1)
            posix_spawn_file_actions_adddup2(&actions, null, 2)
        }
        close(stdin.read)
        guard case .success(let pid) = started else {
            close(stdin.write)
            return 127
        }
        // The pipe holds the whole value: the write cannot block on a tool that never reads.
        _ = input?.withUnsafeBytes { ChildSpawn.writeAll(stdin.write, $0) }
        close(stdin.write)
        return Self.wait(pid, seconds: Self.toolTimeout)
    }

    /// Waits at most `seconds` for `pid`, then kills it (127).
    static func wait(_ pid: pid_t, seconds: Int32) -> Int32 {
        let deadline = Deadline(secondsFromNow: Double(seconds))
        var status: Int32 = 0
        while true {
            let w = waitpid(pid, &status, WNOHANG)
            if w == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if w < 0 && errno != EINTR { return 127 }
            if deadline.remainingMilliseconds == 0 {
                kill(pid, SIGKILL)
                _ = Spawn.wait(pid)
                return 127
            }
            usleep(10_000)
        }
    }

    private func openNull() -> Int32? {
        let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
        return fd >= 0 ? fd : nil
    }
}
