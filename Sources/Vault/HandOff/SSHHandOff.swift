#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// The sender's side of a hand-off: runs `ssh HOST vaultctl receive TARGET`, waits for the receiver's
/// `ready`, and only then writes the secret (after its length) on ssh's standard input and closes it (never in argv or the
/// environment); then waits for the one result line. Every wait has a bound, and ssh is killed by its PID
/// when one passes, so a host that is down or a receiver that says nothing never hangs the sender.
///
/// The ssh command is `ssh`, or `VAULTCTL_SSH` when set, run much as git runs `GIT_SSH_COMMAND`: through
/// `/bin/sh -c 'exec $VAULTCTL_SSH "$@"'`, so it may hold options and quoting (`ssh -i ~/.ssh/unlock -p
/// 2222`); it must start with the program (`exec` makes the shell become it, so the PID that is killed at a
/// bound is ssh's own; variables go through `env`).
/// vaultctl's own options come after it (`-T`, no agent or X11 forwarding, no escape character, no
/// forwardings, no `LocalCommand`, `BatchMode=yes`, `ConnectTimeout`, `ServerAliveInterval`). ssh takes
/// an `-o` option's first value on its command line, and the command line over `~/.ssh/config`: those in
/// `VAULTCTL_SSH` win over vaultctl's, and vaultctl's over `~/.ssh/config` (a `ForwardAgent yes`,
/// `LocalForward` or `LocalCommand` there does not apply to a hand-off).
public struct SSHHandOff: Sendable {
    public let sshCommand: String?
    public let host: String
    public let target: String
    /// Seconds from starting ssh to the receiver's first line (connecting, logging in, the receiver's checks).
    public let readySeconds: Double
    /// Seconds from the secret written to the result line (the receiver's command, e.g. cryptsetup).
    public let resultSeconds: Double

    public init(sshCommand: String?, host: String, target: String, readySeconds: Double, resultSeconds: Double) {
        self.sshCommand = sshCommand
        self.host = host
        self.target = target
        self.readySeconds = readySeconds
        self.resultSeconds = resultSeconds
    }

    /// How a hand-off ended, as far as the sender can tell.
    public enum Outcome: Sendable, Equatable {
        /// The receiver's final line; `secretSent` says whether the secret had gone out.
        case answered(HandOffLine, secretSent: Bool)
        /// ssh ended, or was ended, before the receiver said anything of the protocol: why, in words, and
        /// ssh's exit status when it ended by itself (255: it could not connect or log in).
        case unreachable(String, sshStatus: Int32?)
        /// The secret went out and no result line came back: it may or may not have been delivered.
        case noResult(String)
    }

    /// A host ssh may be given: not empty, not an option (a leading '-' would be read as one), no spaces or
    /// control characters.
    public static func isValidHost(_ host: String) -> Bool {
        guard let first = host.utf8.first, first != UInt8(ascii: "-"), host.utf8.count <= 255 else { return false }
        return host.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7f && !(0x80...0x9f).contains($0.value) }
    }

    /// The program and arguments that start ssh.
    public var argv: [String] {
        let connect = max(1, min(10, Int(readySeconds.rounded(.up))))
        let options = ["-T", "-a", "-x", "-e", "none", "-o", "ClearAllForwardings=yes", "-o", "PermitLocalCommand=no",
                       "-o", "BatchMode=yes", "-o", "ConnectTimeout=\(connect)",
                       "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2",
                       "--", host, "vaultctl receive \(target)"]
        if let sshCommand, !sshCommand.isEmpty {
            // `exec`: the shell becomes ssh, so the PID vaultctl kills at a bound is ssh's own.
            return ["/bin/sh", "-c", "exec \(sshCommand) \"$@\"", "vaultctl-ssh"] + options
        }
        return ["ssh"] + options
    }

    /// Runs the exchange. `beforeSecret` runs right before the secret is written (the audit line); when it
    /// throws, ssh is ended and nothing is written.
    public func run(_ secret: SecretBytes, beforeSecret: () throws(VaultError) -> Void) throws(VaultError) -> Outcome {
        let header = HandOffLine.lengthHeader(secret.count)
        guard let input = ChildSpawn.pipe(holding: header.count + secret.count) else {
            return .unreachable("no pipe could be made for ssh", sshStatus: nil)
        }
        guard let output = ChildSpawn.pipe() else {
            close(input.read)
            close(input.write)
            return .unreachable("no pipe could be made for ssh", sshStatus: nil)
        }
        // ssh's stderr (its own errors, and whatever the far side writes on its stderr) is captured, never
        // passed to our terminal raw: at most one line of it is reported, quoted.
        guard let errors = ChildSpawn.pipe() else {
            close(input.read)
            close(input.write)
            close(output.read)
            close(output.write)
            return .unreachable("no pipe could be made for ssh", sshStatus: nil)
        }
        let started = Spawn.start(argv) { actions in
            posix_spawn_file_actions_adddup2(&actions, input.read, 0)
            posix_spawn_file_actions_adddup2(&actions, output.write, 1)
            posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        }
        close(input.read)
        close(output.write)
        close(errors.write)
        var inputOpen = true
        var said = StderrCapture(fd: errors.read)
        defer {
            if inputOpen { close(input.write) }
            close(output.read)
            close(errors.read)
        }
        guard case .success(let pid) = started else {
            close(input.write)
            inputOpen = false
            return .unreachable("\(Quote.text(argv[0])) could not be started", sshStatus: nil)
        }
        /// Ends ssh (after at most `seconds` of waiting for it to end by itself) and gives its status.
        func finish(waiting seconds: Double) -> Int32? {
            let status = Spawn.wait(pid, atMost: seconds)
            if status == nil { Spawn.kill(pid) }
            said.drain()
            return status
        }

        let ready = Deadline(secondsFromNow: readySeconds)
        switch Self.readLine(output.read, deadline: ready, errors: &said) {
        case .timedOut:
            _ = finish(waiting: 0)
            return .unreachable("no answer from \(Quote.text(host)) within \(Int(readySeconds)) s\(said.clause)", sshStatus: nil)
        case .ended:
            close(input.write)
            inputOpen = false
            let status = finish(waiting: 5)
            return .unreachable("ssh ended without an answer from vaultctl on \(Quote.text(host))\(status.map { " (exit \($0))" } ?? "")\(said.clause)", sshStatus: status)
        case .line(let bytes):
            guard let line = HandOffLine.parse(bytes), HandOffLine.Phase.first.allows(line.word) else {
                _ = finish(waiting: 0)
                return .unreachable("\(Quote.text(host)) did not answer as 'vaultctl receive' does (it said \(Quote.text(String(decoding: bytes.prefix(80), as: UTF8.self))))", sshStatus: nil)
            }
            guard line.word == .ready else {
                close(input.write)
                inputOpen = false
                _ = finish(waiting: 5)
                return .answered(line, secretSent: false)
            }
        }

        do { try beforeSecret() } catch {
            _ = finish(waiting: 0)
            throw error
        }
        // Its length, then the secret; the pipe holds both, so these writes cannot block on an ssh that
        // stopped reading.
        let headerWritten = header.withUnsafeBytes { ChildSpawn.writeAll(input.write, $0) }
        let written = headerWritten == header.count ? secret.withUnsafeBytes { ChildSpawn.writeAll(input.write, $0) } : 0
        close(input.write)
        inputOpen = false
        guard written == secret.count else {
            _ = finish(waiting: 0)
            return .noResult("the secret could not be written to ssh")
        }
        let result = Self.readLine(output.read, deadline: Deadline(secondsFromNow: resultSeconds), errors: &said)
        let status = finish(waiting: 5)
        switch result {
        case .line(let bytes):
            guard let line = HandOffLine.parse(bytes), HandOffLine.Phase.result.allows(line.word) else {
                return .noResult("\(Quote.text(host)) answered something that is not a result line")
            }
            return .answered(line, secretSent: true)
        case .timedOut:
            return .noResult("no result from \(Quote.text(host)) within \(Int(resultSeconds)) s\(said.clause)")
        case .ended:
            return .noResult("the connection ended before \(Quote.text(host)) said how it went\(status.map { " (ssh exit \($0))" } ?? "")\(said.clause)")
        }
    }

    enum LineRead {
        case line([UInt8])
        case ended
        case timedOut
    }

    /// One line from `fd` (without its newline), read a byte at a time so nothing after it is taken; a line
    /// longer than the protocol allows is returned cut (and then fails to parse). ssh's stderr is read
    /// into `errors` meanwhile, so an ssh that writes much there never blocks on a full pipe.
    static func readLine(_ fd: Int32, deadline: Deadline, errors: inout StderrCapture) -> LineRead {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count <= HandOffLine.maximumLength {
            var p = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                     pollfd(fd: errors.open ? errors.fd : -1, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&p, 2, deadline.remainingMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .ended
            }
            if ready == 0 { return .timedOut }
            if p[1].revents != 0 { errors.readSome() }
            if p[0].revents == 0 { continue }
            let n = read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .ended
            }
            if n == 0 { return line.isEmpty ? .ended : .line(line) }
            if byte == 0x0A { return .line(line) }
            line.append(byte)
        }
        return .line(line)
    }
}

/// What ssh wrote on its stderr, kept bounded (the first 4 KiB; the rest is read and dropped), and told as
/// at most one quoted line: ssh's own error ("Connection refused") or the far side's message.
struct StderrCapture {
    let fd: Int32
    private(set) var open = true
    private var kept: [UInt8] = []
    static let limit = 4096

    init(fd: Int32) { self.fd = fd }

    /// Reads what is there now (one read); notes EOF.
    mutating func readSome() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = read(fd, &buffer, buffer.count)
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            open = false
            return
        }
        if n == 0 { open = false; return }
        kept.append(contentsOf: buffer[..<min(n, max(0, Self.limit - kept.count))])
    }

    /// Reads what is left once ssh has ended, without waiting for anyone else who holds the pipe.
    mutating func drain() {
        while open {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 0) > 0 else { return }
            readSome()
        }
    }

    /// The last non-empty line, quoted (control characters escaped), at most 200 characters; nil when none.
    var lastLine: String? {
        let lines = kept.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self).trimmingSpaces }.filter { !$0.isEmpty }
        guard let last = lines.last else { return nil }
        return Quote.text(String(last.prefix(200)))
    }

    /// `; ssh said '…'` for a message, or "".
    var clause: String { lastLine.map { "; ssh said \($0)" } ?? "" }
}

private extension String {
    var trimmingSpaces: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
        var s = String(String.UnicodeScalarView(scalars))
        while let l = s.unicodeScalars.last, l == " " || l == "\t" || l == "\r" { s.unicodeScalars.removeLast() }
        return s
    }
}
