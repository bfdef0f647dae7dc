#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A receiving machine with a real OpenSSH sshd and two sending machines, each a network namespace joined
/// by veth pairs (`scripts/sshd-netns.sh`): the LAN sender at 192.168.77.2 (nearby) and the Tailscale
/// sender at 100.100.77.2 (inside 100.64.0.0/10: remote), so the receiver judges real socket addresses.
/// Every process in them is ended by PID and the namespaces deleted on `deinit`.
final class HandOffNetwork {
    enum Sender {
        case lan, tailscale
    }

    let dir: String

    /// Whether this machine lets the tests make network namespaces (root, `unshare -n` allowed). A missing
    /// sshd is not a reason to skip: the tests fail saying to run `make deps` (openssh-server).
    static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let r = ProcessRunner.run(Paths.tool("unshare"), ["-n", Paths.tool("true")], environment: Fixtures.baseEnvironment)
        return r.status == 0
    }()
    static let unavailableReason: Comment = "needs root and 'unshare -n' (network namespaces) to run the receiver's sshd on veth pairs"

    init() throws {
        dir = try Fixtures.makeFolder("ns")
        let r = ProcessRunner.run(Paths.sshdNetnsScript, ["start", dir, Paths.folder(of: Paths.vaultctl)],
                                  environment: Fixtures.baseEnvironment)
        guard r.status == 0 else {
            _ = ProcessRunner.run(Paths.sshdNetnsScript, ["stop", dir], environment: Fixtures.baseEnvironment)
            throw SetupError(description: "scripts/sshd-netns.sh start failed: \(r)")
        }
    }

    deinit {
        _ = ProcessRunner.run(Paths.sshdNetnsScript, ["stop", dir], environment: Fixtures.baseEnvironment)
    }

    /// Ends sshd (and every session it left): the receiver is down.
    func stopSSHD() throws {
        let r = ProcessRunner.run(Paths.sshdNetnsScript, ["stop-sshd", dir], environment: Fixtures.baseEnvironment)
        try #require(r.status == 0, "\(r)")
    }

    func namespace(_ sender: Sender) -> String {
        FileText.read("\(dir)/\(sender == .lan ? "ns-lan" : "ns-tailscale")")!.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The receiver's address as each sender reaches it.
    static func host(_ sender: Sender) -> String { sender == .lan ? "192.168.77.1" : "100.100.77.1" }
    /// The same over IPv6: a unique-local LAN address, and one in Tailscale's fd7a:115c:a1e0::/48.
    static func hostV6(_ sender: Sender) -> String { sender == .lan ? "fd00:77::1" : "fd7a:115c:a1e0::1" }

    var receiverHome: String { "\(dir)/receiver/home" }
    var receiverConfig: String { "\(dir)/receiver/config" }
    var receiverState: String { "\(dir)/receiver/state" }
    var receiverAuditLog: String { "\(receiverState)/vaultctl/audit.log" }
    /// The lines `receive` wrote in the receiver's audit log (the set-up's `target add` lines left out).
    var receiverAuditLines: [String] {
        (FileText.read(receiverAuditLog) ?? "").split(separator: "\n").map(String.init).filter { $0.contains(#""command":"receive""#) }
    }
    var sshdLog: String { "\(dir)/sshd.log" }
    /// Where the recording ssh wrapper writes ssh's arguments and environment.
    var sshArgumentsFile: String { "\(dir)/ssh-args" }
    var sshEnvironmentFile: String { "\(dir)/ssh-env" }

    /// Runs `vaultctl ARGS` as the receiver's user, outside sshd (to configure targets), without PAM.
    func receiverVaultctl(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        var env = Fixtures.baseEnvironment
        env["HOME"] = receiverHome
        env["XDG_CONFIG_HOME"] = receiverConfig
        env["XDG_STATE_HOME"] = receiverState
        return ProcessRunner.run(Paths.vaultctl, args, environment: env, sourceLocation: sourceLocation)
    }

    /// `vaultctl receive --print-authorized-key KEY.pub TARGET` for one of the made keys.
    func authorizedLine(target: String, key: String = "sender_key", sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = receiverVaultctl(["receive", "--print-authorized-key", "\(dir)/\(key).pub", target], sourceLocation: sourceLocation)
        try #require(r.status == 0 && r.stderr.isEmpty, "\(r)", sourceLocation: sourceLocation)
        return r.stdoutText.trimmingCharacters(in: .newlines)
    }

    /// The public key line of one of the made keys.
    func publicKey(_ key: String) -> String {
        FileText.read("\(dir)/\(key).pub")!.trimmingCharacters(in: .newlines)
    }

    /// Replaces `authorized_keys`.
    func authorize(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(FileText.write("\(dir)/authorized_keys", lines.joined(separator: "\n") + "\n", mode: 0o600),
                     sourceLocation: sourceLocation)
    }

    /// `VAULTCTL_SSH` for a key: a wrapper that notes ssh's arguments and environment, then runs ssh with
    /// the network's client config.
    func sshCommand(key: String = "sender_key") throws -> String {
        let wrapper = "\(dir)/ssh-recording"
        if !Paths.exists(wrapper) {
            let text = "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(sshArgumentsFile)'\nenv >> '\(sshEnvironmentFile)'\nexec ssh \"$@\"\n"
            guard FileText.write(wrapper, text, mode: 0o700), chmod(wrapper, 0o700) == 0 else {
                throw SetupError(description: "could not write \(wrapper)")
            }
        }
        return "\(wrapper) -F '\(dir)/ssh_config' -i '\(dir)/\(key)'"
    }

    /// `vaultctl send SLOT --to HOST TARGET` from a sender's namespace, with a counting askpass program.
    func send(_ sb: Sandbox, _ slot: String, target: String, from sender: Sender = .lan, key: String = "sender_key",
              ipv6: Bool = false, password: CountedPassword = .correct, overriding: [String: String] = [:],
              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let env = ["VAULTCTL_SSH": try sshCommand(key: key)].merging(overriding) { $1 }
        let host = ipv6 ? Self.hostV6(sender) : Self.host(sender)
        return try sb.vaultctlCounted(["send", slot, "--to", host, target], password: password,
                                      prefix: [Paths.tool("ip"), "netns", "exec", namespace(sender)], overriding: env,
                                      sourceLocation: sourceLocation)
    }

    /// The processes still running in a sender's namespace (ssh that `send` started and did not end).
    func processesLeft(in sender: Sender) -> String {
        let r = ProcessRunner.run(Paths.tool("ip"), ["netns", "pids", namespace(sender)], environment: Fixtures.baseEnvironment)
        return r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs plain `ssh` from a sender's namespace with the network's client config.
    func ssh(from sender: Sender = .lan, key: String = "sender_key", _ args: [String], stdin: Stdin = .null,
             sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        ProcessRunner.run(Paths.tool("ip"), ["netns", "exec", namespace(sender), Paths.tool("ssh"), "-F", "\(dir)/ssh_config",
                                             "-i", "\(dir)/\(key)", "-o", "BatchMode=yes"] + args,
                          environment: Fixtures.baseEnvironment, stdin: stdin, sourceLocation: sourceLocation)
    }

    /// Every file under the network's folder (receiver state and config, sshd's log, the recordings),
    /// for a test that searches them for a secret.
    func allFiles() -> [String] {
        let e = FileManager.default.enumerator(atPath: dir)
        var out: [String] = []
        while let p = e?.nextObject() as? String { out.append("\(dir)/\(p)") }
        return out
    }
}

extension Paths {
    static var sshdNetnsScript: String { "\(repositoryRoot)/scripts/sshd-netns.sh" }
}
