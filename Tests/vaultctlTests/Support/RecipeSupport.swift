#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The README's supply/askpass recipes, word for word, and what running them for real needs: the README
/// text itself (to prove the recipe is still shown as tested), the built binary in place of `vaultctl`, a
/// private `ssh-agent`, and a way to find and stop the `gnome-keyring-daemon` a `--replace` started.
enum Recipe {
    /// The ssh-add recipe, first line: write the askpass wrapper (into `~/.local/bin`, made if missing).
    static let sshWrapper =
        #"mkdir -p ~/.local/bin; printf '#!/bin/sh\nexec vaultctl askpass ssh-key -- "$@"\n' > ~/.local/bin/vaultctl-askpass-ssh; chmod +x ~/.local/bin/vaultctl-askpass-ssh"#
    /// The ssh-add recipe, second line: add the key, its passphrase from the wrapper.
    static let sshAdd = "SSH_ASKPASS=~/.local/bin/vaultctl-askpass-ssh SSH_ASKPASS_REQUIRE=force ssh-add ~/.ssh/id_ed25519"

    /// The gnome-keyring recipe, its three lines as shown.
    static let keyringUnlock = #"""
        vaultctl supply keyring-login \
          --if-locked 'gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets/collection/login --method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked | grep -q true' \
          -- gnome-keyring-daemon --replace --unlock --components=secrets
        """#

    /// README.md and the manual it points to (docs/manual.md), where the recipes are.
    static var readme: String {
        (FileText.read("\(Paths.repositoryRoot)/README.md") ?? "") + "\n" + (FileText.read("\(Paths.repositoryRoot)/docs/manual.md") ?? "")
    }

    /// `recipe` with the word `vaultctl` before `askpass`/`supply` replaced by the binary under test. The
    /// path goes in unquoted (it sits inside the wrapper's printf format), so it must need no quoting.
    static func usingBuiltBinary(_ recipe: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = Paths.vaultctl
        let plain = path.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "/._-+".unicodeScalars.contains($0)
        }
        try #require(plain, "the binary's path \(path) needs quoting; the recipe cannot take it as is",
                     sourceLocation: sourceLocation)
        let out = recipe.replacingOccurrences(of: "vaultctl askpass ", with: "\(path) askpass ")
            .replacingOccurrences(of: "vaultctl supply ", with: "\(path) supply ")
        try #require(out != recipe, "no 'vaultctl' command in the recipe", sourceLocation: sourceLocation)
        return out
    }

    /// Whether every program is installed in the tests' PATH.
    static func installed(_ programs: [String]) -> Bool {
        programs.allSatisfy { Paths.tool($0).hasPrefix("/") }
    }

    /// ssh-keygen, ssh-agent and ssh-add (Debian: openssh-client).
    static let sshToolsInstalled = installed(["ssh-keygen", "ssh-agent", "ssh-add"])
}

/// A private `ssh-agent -a SOCKET`, stopped with `stop()` (tests use `defer`).
struct SSHAgent {
    let socket: String
    let pid: pid_t

    /// Starts one listening on `socket`; reads its pid from what it prints.
    static func start(socket: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SSHAgent {
        let r = ProcessRunner.run(Paths.tool("ssh-agent"), ["-s", "-a", socket], environment: Fixtures.baseEnvironment,
                                  timeout: .seconds(10), sourceLocation: sourceLocation)
        try #require(r.status == 0, "ssh-agent did not start: \(r)", sourceLocation: sourceLocation)
        let text = r.stdoutText
        let pid = text.range(of: "SSH_AGENT_PID=").flatMap { found in
            pid_t(text[found.upperBound...].prefix { $0.isNumber })
        }
        let agentPID = try #require(pid, "no SSH_AGENT_PID in what ssh-agent printed: \(text.debugDescription)",
                                    sourceLocation: sourceLocation)
        return SSHAgent(socket: socket, pid: agentPID)
    }

    /// `ssh-add ARGS` against this agent, with no askpass and nothing to ask on.
    func sshAdd(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        let env = Fixtures.baseEnvironment.merging(["SSH_AUTH_SOCK": socket]) { $1 }
        return ProcessRunner.run(Paths.tool("ssh-add"), args, environment: env, timeout: .seconds(10),
                                 sourceLocation: sourceLocation)
    }

    /// The keys it holds, as `ssh-add -l` prints them (none: an empty list).
    func listedKeys(sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let r = sshAdd(["-l"], sourceLocation: sourceLocation)
        guard r.status == 0 else { return [] }  // 1: "The agent has no identities."
        return r.stdoutText.split(separator: "\n").map(String.init)
    }

    func stop() {
        Processes.terminate([pid])
    }
}

/// Processes the tests started but do not parent (daemons), found and ended by pid.
enum Processes {
    /// Whether `pid` names a process that has not exited (a zombie has).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = FileText.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state != "Z" && state != "X"
    }

    /// SIGTERM to each, then SIGKILL to any still running after 2 s.
    static func terminate(_ pids: [pid_t]) {
        for pid in pids { kill(pid, SIGTERM) }
        for _ in 0..<40 where pids.contains(where: isRunning) { usleep(50_000) }
        for pid in pids where isRunning(pid) { kill(pid, SIGKILL) }
    }

    /// Running processes named `command` (as in `/proc/PID/comm`, cut to 15 bytes by the kernel) whose
    /// environment holds `variable` exactly (`NAME=value`).
    static func find(command: String, environmentHolds variable: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let wanted = Array(variable.utf8)
        let name = String(command.prefix(15))
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard pid != getpid(),
                  FileText.read("/proc/\(pid)/comm")?.trimmingCharacters(in: .newlines) == name,
                  let environ = FileBytes.read("/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { Array($0) == wanted } && isRunning(pid)
        }
    }
}

extension SecretServiceInstance {
    /// The environment gnome-keyring runs with in `scripts/secret-service.sh`: its bus, and its `HOME`,
    /// `XDG_DATA_HOME` (the keyring files) and `XDG_RUNTIME_DIR` (its control socket, which `--replace`
    /// looks for).
    var keyringEnvironment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": busAddress,
            "HOME": "\(folder)/home",
            "XDG_DATA_HOME": "\(folder)/home/.local/share",
            "XDG_RUNTIME_DIR": "\(folder)/run",
        ]
    }

    /// The `gnome-keyring-daemon` processes serving this instance: the one the script started, or one that
    /// replaced it (not in the script's pid file), found by the runtime folder in their environment.
    var keyringDaemons: [pid_t] {
        Processes.find(command: "gnome-keyring-daemon", environmentHolds: "XDG_RUNTIME_DIR=\(folder)/run")
    }

    /// The login collection's `Locked` property (nil when it could not be read).
    func loginCollectionLocked() -> Bool? {
        let r = CollectionProperty.read("Locked", environment: clientEnvironment, answerWithin: 5, timeout: .seconds(10))
        guard r.status == 0 else { return nil }
        if r.stdoutText.contains("true") { return true }
        if r.stdoutText.contains("false") { return false }
        return nil
    }
}

extension Sandbox {
    /// A `VAULT_ASKPASS` program that appends the prompt it is given (its first argument) to `promptLog`,
    /// one line per call, then prints the right or a wrong password.
    func promptRecordingAskpass(_ password: CountedPassword) throws -> String {
        let path = "\(root)/askpass-recording-\(password.rawValue)"
        let answer = password == .correct ? Fixtures.pamPassword : Fixtures.wrongPassword
        let body = "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(promptLog)'\nprintf '%s\\n' '\(answer)'\n"
        guard FileText.write(path, body, mode: 0o700), chmod(path, 0o700) == 0 else {
            throw SetupError(description: "could not write \(path)")
        }
        return path
    }

    /// The file `promptRecordingAskpass` programs append to.
    var promptLog: String { "\(root)/prompts.log" }

    /// The prompts PAM's askpass was called with, in order.
    var prompts: [String] { (FileText.read(promptLog) ?? "").split(separator: "\n").map(String.init) }

    /// Runs `script` with `/bin/sh -c` in this sandbox's environment (the one vaultctl gets: XDG folders,
    /// bus, pam_wrapper, `VAULT_ASKPASS`) plus `overriding`. A run in which pam_wrapper could not start PAM
    /// (its own race, which asks nothing) is tried again, as `ProcessRunner` does for vaultctl itself.
    func shell(_ script: String, overriding: [String: String], timeout: Duration = .seconds(20),
               sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let env = try environment(askpass: .correct).merging(overriding) { $1 }
        var r = ProcessRunner.run(Paths.tool("sh"), ["-c", script], environment: env, timeout: timeout,
                                  sourceLocation: sourceLocation).droppingPAMWrapperNoise()
        for _ in 0..<3 where r.stderr.contains("PAM could not start") {
            PamWrapperDirs.sweepStale()
            usleep(100_000)
            r = ProcessRunner.run(Paths.tool("sh"), ["-c", script], environment: env, timeout: timeout,
                                  sourceLocation: sourceLocation).droppingPAMWrapperNoise()
        }
        return r
    }

    /// `ssh-keygen -t ed25519 -N PASSPHRASE -f ~/.ssh/id_ed25519` in this sandbox's home (the recipe's key);
    /// returns the key's fingerprint line as `ssh-keygen -l` prints it.
    func makeSSHKey(passphrase: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        mkdir("\(home)/.ssh", 0o700)
        let key = "\(home)/.ssh/id_ed25519"
        let gen = ProcessRunner.run(Paths.tool("ssh-keygen"), [
            "-q", "-t", "ed25519", "-N", passphrase, "-C", "recipe-\(getpid())", "-f", key,
        ], environment: Fixtures.baseEnvironment, timeout: .seconds(10), sourceLocation: sourceLocation)
        try #require(gen.status == 0, "ssh-keygen failed: \(gen)", sourceLocation: sourceLocation)
        let fp = ProcessRunner.run(Paths.tool("ssh-keygen"), ["-l", "-f", "\(key).pub"],
                                   environment: Fixtures.baseEnvironment, timeout: .seconds(10),
                                   sourceLocation: sourceLocation)
        try #require(fp.status == 0, "ssh-keygen -l failed: \(fp)", sourceLocation: sourceLocation)
        // "256 SHA256:… comment (ED25519)": the hash is what identifies the key.
        let words = fp.stdoutText.split(separator: " ")
        return try #require(words.count > 1 ? String(words[1]) : nil, "no fingerprint in \(fp.stdoutText)",
                            sourceLocation: sourceLocation)
    }

    /// A new folder for an agent socket, short enough for a socket path (108 bytes).
    func agentSocketPath() throws -> String {
        var template = Array("\(root)/agent.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SetupError(description: "mkdtemp in \(root) failed: errno \(errno)") }
        return "\(String(cString: made))/s"
    }
}
