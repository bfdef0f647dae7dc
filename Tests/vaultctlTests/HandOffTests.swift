#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `vaultctl send` and `vaultctl receive` end to end: a real sshd in a network namespace of its own, the
/// receiver as its forced command, senders in two other namespaces (a LAN address and a Tailscale one), and
/// the sender's PAM under pam_wrapper. Every prompt goes through a counting askpass program.
@Suite("send and receive over ssh", .serialized, .enabled(if: HandOffNetwork.available, HandOffNetwork.unavailableReason),
       .tags(.needsRoot, .needsServices))
struct HandOffTests {
    /// A network with target `name` configured on the receiver (CHECK, then the consumer), its key line in
    /// authorized_keys, and a sender sandbox holding a suppliable slot.
    struct Setup {
        let net: HandOffNetwork
        let sender: Sandbox
        /// Holds the receiver's check and consumer scripts (apart from the sender's files).
        let scripts: Sandbox
        let slot: String
        let secret: [UInt8]
        let target = "data-volume"
        let consumer: Consumer
    }

    static func setUp(check: (Sandbox) throws -> CheckScript?, consumerExit: Int32 = 0,
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> (Setup, CheckScript?) {
        let net = try HandOffNetwork()
        let sender = try Sandbox()
        let scripts = try Sandbox()
        let slot = sender.uniqueSlot("send")
        let secret = TestData.binarySecret(slot)
        try sender.storeSuppliable(slot, secret)
        let consumer = try scripts.makeConsumer(exiting: consumerExit)
        let c = try check(scripts)
        let setup = Setup(net: net, sender: sender, scripts: scripts, slot: slot, secret: secret, consumer: consumer)
        let add = net.receiverVaultctl(["target", "add", setup.target] + (c.map { ["--if-locked", $0.path] } ?? []) + ["--", consumer.path, "--key-file=-"],
                                       sourceLocation: sourceLocation)
        try #require(add.status == 0, "\(add)", sourceLocation: sourceLocation)
        try net.authorize([try net.authorizedLine(target: setup.target, sourceLocation: sourceLocation)], sourceLocation: sourceLocation)
        sender.resetAskpassLog()
        return (setup, c)
    }

    // MARK: Delivered

    @Test func aLANSenderDeliversTheExactBytesToTheTargetsCommandOnStdinOnly() throws {
        let (s, check) = try Self.setUp { try $0.makeCheckUnlockedByDelivery() }
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("target 'data-volume' is unlocked"), "\(r.stderr)")
        #expect(s.sender.askpassCalls == 1, "one fresh PAM prompt on the sender")
        #expect(check?.runs == 3, "the receiver's check: before ready, right before delivery, once after")
        #expect(s.consumer.stdin == s.secret, "the exact bytes, then EOF")
        #expect(String(decoding: s.consumer.arguments, as: UTF8.self) == "--key-file=-\n", "the receiver's own arguments")

        // The receiver judged the real socket address and logged both steps, never the secret.
        let received = try JSONLines.parse(s.net.receiverAuditLines.joined(separator: "\n"))
        #expect(received.map { $0["result"] as? String } == ["handed-over", "ok"], "\(received)")
        #expect(received.allSatisfy { $0["origin"] as? String == "ssh from 192.168.77.2" }, "\(received)")
        // The store that set up the slot is a change and has its own line first.
        let sent = try JSONLines.parse(s.sender.auditFileLines.joined(separator: "\n")).filter { $0["command"] as? String != "store" }
        #expect(sent.map { $0["command"] as? String } == ["send", "send"])
        #expect(sent.map { $0["result"] as? String } == ["handed-over", "ok"], "\(sent)")
        #expect(try s.sender.statusObject(s.slot)["lastSupply"] is [String: Any], "a send is a supply")

        // Nowhere but the consumer's stdin: not in ssh's argv or environment, the consumer's argv or
        // environment, any file of the sender, the receiver or sshd, nor any output.
        let marker = Array("bin-\(s.slot)".utf8)
        #expect(Paths.exists(s.net.sshArgumentsFile) && Paths.exists(s.net.sshEnvironmentFile))
        for file in s.net.allFiles() + Self.files(under: s.sender.root) {
            #expect(!(FileBytes.read(file) ?? []).contains(bytes: marker), "the secret is in \(file)")
        }
        #expect(!s.consumer.arguments.contains(bytes: marker) && !s.consumer.environment.contains(bytes: marker))
        #expect(!r.stdout.contains(bytes: marker) && !Array(r.stderr.utf8).contains(bytes: marker))
    }

    @Test func aConsumerAndACheckThatPrintReachNeitherTheChannelNorTheSendersTerminal() throws {
        let (s, check) = try Self.setUp { try $0.makeCheckUnlockedByDelivery() }
        // As zfs load-key or gnome-keyring-daemon --unlock do: a line on stdout, and here escape sequences
        // on stderr too, from the consumer and from the check.
        try s.scripts.writeScript(s.consumer.path, """
            cat > '\(s.consumer.folder)/stdin'
            echo '1 key loaded'
            printf '\\033]0;owned\\007\\033[31mred\\n' >&2
            exit 0

            """)
        let checkBody = try #require(FileText.read(check!.path)).replacingOccurrences(of: "#!/bin/sh\n", with: "")
        try s.scripts.writeScript(check!.path, "echo 'checking'\nprintf '\\033[2J' >&2\n" + checkBody)
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 0, "delivered, not 'not a result line': \(r)")
        #expect(s.consumer.stdin == s.secret)
        #expect(check?.runs == 3)
        #expect(!Array(r.stderr.utf8).contains(0x1B), "no escape byte reached the sender's terminal: \(r.stderr)")
        #expect(!r.stdout.contains(0x1B))
    }

    @Test func whatTheFarSideWritesOnStderrIsReportedQuotedInOneLine() throws {
        let (s, _) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        try s.net.authorize(["command=\"printf '\\033[31mfirst\\n\\033[2Jlast words\\n' >&2; exit 3\",restrict " + s.net.publicKey("sender_key")])
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 69, "\(r)")
        #expect(!Array(r.stderr.utf8).contains(0x1B), "\(r.stderr)")
        #expect(r.stderr.contains("ssh said '\\x1b[2Jlast words'") && !r.stderr.contains("first"), "the last line, escaped: \(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }

    // MARK: Refused before any secret moves

    @Test func aTailscaleSenderIsRefusedBeforeAnySecretMoves() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        let r = try s.net.send(s.sender, s.slot, target: s.target, from: .tailscale)
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("refused") && r.stderr.contains("100.100.77.2") && r.stderr.contains("100.64.0.0/10"), "\(r.stderr)")
        #expect(check?.runs == 0, "refused before the lock check")
        #expect(!s.consumer.ran)
        let received = try JSONLines.parse(s.net.receiverAuditLines.joined(separator: "\n"))
        #expect(received.map { $0["result"] as? String } == ["refused"], "\(received)")
        #expect(try s.sender.statusObject(s.slot)["lastSupply"] is NSNull, "nothing was supplied")
    }

    @Test func overIPv6TheLANIsNearbyAndTailscalesRangeIsRemote() throws {
        let (s, check) = try Self.setUp { try $0.makeCheckUnlockedByDelivery() }
        let far = try s.net.send(s.sender, s.slot, target: s.target, from: .tailscale, ipv6: true)
        #expect(far.status == 77, "\(far)")
        #expect(far.stderr.contains("fd7a:115c:a1e0::2") && far.stderr.contains("fd7a:115c:a1e0::/48"), "\(far.stderr)")
        #expect(check?.runs == 0 && !s.consumer.ran)
        let near = try s.net.send(s.sender, s.slot, target: s.target, ipv6: true)
        #expect(near.status == 0, "\(near)")
        #expect(s.consumer.stdin == s.secret)
        let received = try JSONLines.parse(s.net.receiverAuditLines.joined(separator: "\n"))
        #expect(received.last?["origin"] as? String == "ssh from fd00:77::2", "\(received)")
    }

    @Test func aTargetAlreadyUnlockedGetsNothingAndIsExitZero() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 1) }
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("already unlocked") && r.stderr.contains("nothing was sent"), "\(r.stderr)")
        #expect(check?.runs == 1)
        #expect(!s.consumer.ran)
    }

    @Test func aTargetUnlockedBetweenTheChecksGetsNothing() throws {
        let (s, check) = try Self.setUp { try $0.makeUnlockingCheck() }
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("unlocked meanwhile") && r.stderr.contains("nothing was delivered"), "\(r.stderr)")
        #expect(check?.runs == 2, "once before ready, once right before delivery")
        #expect(!s.consumer.ran, "nothing delivered")
    }

    @Test func anUnknownTargetIsRefusedAndAKeyForOneTargetCannotReachAnother() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        let r = try s.net.send(s.sender, s.slot, target: "backup-disk")
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("may only hand a secret to target 'data-volume'"), "\(r.stderr)")
        #expect(check?.runs == 0 && !s.consumer.ran)

        // Bound to a target that is not configured: refused as such.
        try s.net.authorize([try s.net.authorizedLine(target: "backup-disk")])
        let unknown = try s.net.send(s.sender, s.slot, target: "backup-disk")
        #expect(unknown.status == 77, "\(unknown)")
        #expect(unknown.stderr.contains("no target 'backup-disk' is configured"), "\(unknown.stderr)")
    }

    @Test func aWrongPasswordOnTheSenderSendsNothingAndCounts() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        for attempt in 1...3 {
            let r = try s.net.send(s.sender, s.slot, target: s.target, password: .wrong)
            #expect(r.status == 77, "attempt \(attempt): \(r)")
            #expect(r.stderr.contains("Authentication failed"), "\(r.stderr)")
            if attempt == 3 { #expect(r.stderr.contains("blocked until"), "the third failure starts the block: \(r.stderr)") }
        }
        #expect(!Paths.exists(s.net.sshArgumentsFile), "ssh never started")
        #expect(s.net.receiverAuditLines.isEmpty, "the receiver never ran")
        #expect(check?.runs == 0 && !s.consumer.ran)
        s.sender.resetAskpassLog()
        let blocked = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(blocked.status == 75, "blocked, even with the right password: \(blocked)")
        #expect(s.sender.askpassCalls == 0, "no prompt while blocked")
    }

    @Test func theSendersOwnChecksComeFirst() throws {
        let (s, _) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        let remote = try s.net.send(s.sender, s.slot, target: s.target,
                                    overriding: ["SSH_CONNECTION": "100.64.7.9 50522 100.100.1.1 22"])
        #expect(remote.status == 77 && remote.stderr.contains("remote session"), "\(remote)")
        let off = s.sender.vaultctlWithoutPAM(["allow-supply", s.slot, "off"])
        try #require(off.status == 0, "\(off)")
        let forbidden = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(forbidden.status == 77 && forbidden.stderr.contains("may not be supplied"), "\(forbidden)")
        #expect(s.sender.askpassCalls == 0, "refused before any prompt")
        #expect(!Paths.exists(s.net.sshArgumentsFile), "ssh never started")
    }

    @Test func aSecretCutShortIsNeverDelivered() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        // What a dropped connection leaves: the length said 10, three bytes came, then EOF.
        let r = s.net.ssh([HandOffNetwork.host(.lan), "vaultctl receive data-volume"], stdin: .text("10\nabc"))
        #expect(r.stdoutText == "vaultctl-receive 1 ready\nvaultctl-receive 1 failed the secret arrived cut short or malformed (not its length, then that many bytes); nothing was delivered\n", "\(r)")
        #expect(r.status == 1)
        #expect(check?.runs == 1 && !s.consumer.ran, "nothing delivered, and not counted")
    }

    @Test func aLockedVaultOnTheReceiverRefusesToReceive() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        let lock = s.net.receiverVaultctl(["lock"])
        try #require(lock.status == 0, "\(lock)")
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("The vault is locked") && r.stderr.contains("the receiver refused"), "the receiver's own line comes through ssh: \(r.stderr)")
        #expect(check?.runs == 0 && !s.consumer.ran)
    }

    // MARK: The key

    @Test func aKeyWithoutTheForcedCommandIsRefused() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        // A second key, authorized plainly: it could run anything, so receive refuses to work for it.
        try s.net.authorize([try s.net.authorizedLine(target: s.target), s.net.publicKey("other_key")])
        let r = try s.net.send(s.sender, s.slot, target: s.target, key: "other_key")
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("only as the forced command"), "\(r.stderr)")
        #expect(check?.runs == 0 && !s.consumer.ran)
    }

    @Test func theForcedCommandIgnoresWhatTheSenderAsksAndRestrictAllowsNothingElse() throws {
        let (s, check) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        let shell = s.net.ssh([HandOffNetwork.host(.lan), "id; cat /etc/hostname"])
        #expect(shell.status == 77, "\(shell)")
        #expect(shell.stdoutText.hasPrefix("vaultctl-receive 1 refused this key may only hand a secret to target 'data-volume'"), "\(shell.stdoutText)")
        #expect(!shell.stdoutText.contains("uid="), "the asked command never ran")
        let none = s.net.ssh(["-T", HandOffNetwork.host(.lan)])
        #expect(none.status == 77 && none.stdoutText.contains("either the sender asked for no command"), "\(none)")
        // The key works (the same key, asking only for a forwarding, is let in) but restrict refuses it.
        let forward = s.net.ssh(["-o", "ExitOnForwardFailure=yes", "-N", "-R", "127.0.0.1:2222:127.0.0.1:22", HandOffNetwork.host(.lan)])
        #expect(forward.status == 255 && forward.stderr.contains("forwarding failed"), "restrict: no port forwarding: \(forward)")
        #expect(check?.runs == 0 && !s.consumer.ran)
    }

    // MARK: Unreachable, bounded

    @Test func aReceiverThatIsDownIs69Quickly() throws {
        let (s, _) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        try s.net.stopSSHD()
        let started = ContinuousClock.now
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.contains("Nothing was sent"), "\(r.stderr)")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try s.sender.statusObject(s.slot)["lastSupply"] is NSNull)
        #expect(s.net.processesLeft(in: .lan).isEmpty)
    }

    @Test func aSilentReceiverIs69WithinTheBound() throws {
        let (s, _) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        try s.net.authorize(["command=\"sleep 60\",restrict " + s.net.publicKey("sender_key")])
        let started = ContinuousClock.now
        let r = try s.net.send(s.sender, s.slot, target: s.target, overriding: ["VAULTCTL_SEND_SECONDS": "3"])
        let took = ContinuousClock.now - started
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.contains("no answer") && r.stderr.contains("within 3 s"), "\(r.stderr)")
        #expect(took < .seconds(12), "bounded: \(took)")
        #expect(!s.consumer.ran)
        #expect(s.net.processesLeft(in: .lan).isEmpty, "ssh itself was ended by its PID, not only a shell around it")
    }

    // MARK: Rejected secrets block, on each side

    @Test func threeRejectedSecretsBlockTheSenderAndTheReceiver() throws {
        let (s, _) = try Self.setUp(check: { try $0.makeCheck(exiting: 0) }, consumerExit: 2)
        for attempt in 1...3 {
            let r = try s.net.send(s.sender, s.slot, target: s.target)
            #expect(r.status == 1, "attempt \(attempt): \(r)")
            #expect(r.stderr.contains("did not accept the secret") && r.stderr.contains("exited 2 after reading the secret"), "\(r.stderr)")
        }
        // The sender counted them: it is blocked itself, before any prompt.
        s.sender.resetAskpassLog()
        let senderBlocked = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(senderBlocked.status == 75, "\(senderBlocked)")
        #expect(s.sender.askpassCalls == 0)

        // The receiver counted them too: another sender (its own state, not blocked) is refused there.
        let other = try Sandbox()
        try other.storeSuppliable(s.slot, s.secret)
        let r = try s.net.send(other, s.slot, target: s.target)
        #expect(r.status == 75, "\(r)")
        #expect(r.stderr.contains("too many failed attempts on the receiver"), "\(r.stderr)")
        let received = try JSONLines.parse(s.net.receiverAuditLines.joined(separator: "\n"))
        #expect(received.last?["result"] as? String == "refused", "\(received)")
    }

    @Test func aDeliveredLineBeforeAnySecretWasSentIsNotBelieved() throws {
        let (s, _) = try Self.setUp { try $0.makeCheck(exiting: 0) }
        try s.net.authorize(["command=\"echo 'vaultctl-receive 1 delivered target data-volume is unlocked'\",restrict " + s.net.publicKey("sender_key")])
        let r = try s.net.send(s.sender, s.slot, target: s.target)
        #expect(r.status == 69, "not delivered: nothing was sent: \(r)")
        #expect(r.stderr.contains("did not answer as 'vaultctl receive' does") && r.stderr.contains("Nothing was sent"), "\(r.stderr)")
        #expect(!s.consumer.ran)
    }

    @Test func theSendersSSHConfigCannotAddALocalCommandOrAForwarding() throws {
        let (s, _) = try Self.setUp { try $0.makeCheckUnlockedByDelivery() }
        // A ~/.ssh/config as a person may have: a LocalCommand and a forwarding for every host.
        let ran = "\(s.scripts.root)/local-command-ran"
        let config = "\(s.scripts.root)/ssh_config"
        try #require(FileText.write(config, "PermitLocalCommand yes\nLocalCommand touch \(ran)\nLocalForward 127.0.0.1:24022 127.0.0.1:22\nExitOnForwardFailure yes\nInclude \(s.net.dir)/ssh_config\n", mode: 0o600))
        let ssh = try s.net.sshCommand().replacingOccurrences(of: "-F '\(s.net.dir)/ssh_config'", with: "-F '\(config)'")
        let r = try s.net.send(s.sender, s.slot, target: s.target, overriding: ["VAULTCTL_SSH": ssh])
        #expect(r.status == 0, "\(r)")
        #expect(!Paths.exists(ran), "the config's LocalCommand did not run")
        #expect(s.consumer.stdin == s.secret)
    }

    @Test func parallelConnectionsGetNoMoreSecretsToTheCommandThanTheLimit() throws {
        let (s, _) = try Self.setUp(check: { try $0.makeCheck(exiting: 0) }, consumerExit: 2)
        // A consumer that rejects every secret, slowly enough that all the connections overlap.
        let runs = "\(s.consumer.folder)/runs"
        try s.scripts.writeScript(s.consumer.path, "cat > /dev/null\necho run >> '\(runs)'\nsleep 1\nexit 2\n")
        nonisolated(unsafe) let net = s.net
        let results = Parallel.run((0..<8).map { _ in
            { @Sendable in net.ssh([HandOffNetwork.host(.lan), "vaultctl receive data-volume"], stdin: .bytes(Array("5\nabcde".utf8))).stdoutText }
        })
        let consumerRuns = (FileText.read(runs) ?? "").split(separator: "\n").count
        #expect(consumerRuns <= 3, "the receiver's limit is 3 failures: \(consumerRuns) secrets reached the command; \(results)")
        #expect(consumerRuns >= 1, "\(results)")
        let finals = results.map { $0.split(separator: "\n").last.map(String.init) ?? "" }
        #expect(finals.filter { $0.hasPrefix("vaultctl-receive 1 rejected") }.count == consumerRuns, "\(finals)")
        #expect(finals.filter { $0.hasPrefix("vaultctl-receive 1 blocked") }.count == 8 - consumerRuns, "the rest refused, blocked: \(finals)")
    }

    static func files(under root: String) -> [String] {
        let e = FileManager.default.enumerator(atPath: root)
        var out: [String] = []
        while let p = e?.nextObject() as? String { out.append("\(root)/\(p)") }
        return out
    }
}
