#if canImport(Glibc)
import TestSupport
import Glibc
#endif
import Foundation
import Testing
@testable import Vault
@testable import VaultRules

/// The receiver's phase after the secret arrived has one bound, shared by the check again, the command and
/// the checks after it, so the result always comes before the sender stops waiting.
@Suite struct HandOffReceiverDeadlineTests {
    /// A receiver of target `t1` for a nearby sender, its state in `folder`.
    static func receiver(_ targets: TargetList, _ folder: TemporaryFolder, afterSecretSeconds: Double) -> HandOffReceiver {
        HandOffReceiver(targetName: "t1", originalCommand: "vaultctl receive t1", targets: targets,
                        origin: Origin(verdict: .nearby, description: "ssh from 192.168.1.2"),
                        limiter: RateLimiter(stateFolder: folder.appending("state"), policy: .shipped, clock: SystemClock()),
                        afterSecretSeconds: afterSecretSeconds)
    }

    /// The read end of a pipe that holds a framed five-byte secret and then ends, as a sender writes it.
    static func framedSecret() throws -> Int32 {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let framed = Array("5\nabcde".utf8)
        try #require(framed.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == framed.count)
        close(fds[1])
        return fds[0]
    }

    @Test func theCheckTheCommandAndTheChecksAfterItShareOneDeadline() throws {
        let folder = TemporaryFolder()
        let runs = folder.appending("runs")
        // Fast before ready; then 1 s a run, and always still locked: alone, each within its own bound, the
        // re-check (1 s), the command (1 s) and the checks after it (5 × 1 s) would take about 8 s.
        let check = "echo run >> '\(runs)'; [ \"$(wc -l < '\(runs)')\" -le 1 ] || sleep 1; exit 0"
        let targets = TargetList(configFolder: folder.appending("config"))
        try targets.add(Target(name: "t1", check: check, command: ["/bin/sh", "-c", "cat > /dev/null; sleep 1"]))
        let receiver = Self.receiver(targets, folder, afterSecretSeconds: 3)
        let input = try Self.framedSecret()
        defer { close(input) }
        let started = ContinuousClock.now
        let line = receiver.run(input: input, say: { _ in true }, beforeDelivery: {})
        let took = ContinuousClock.now - started
        #expect(took < .seconds(4.5), "one 3 s deadline after the secret: \(took)")
        #expect(line.word == .failed && line.text.contains("did not say it is unlocked within the receiver's 3 s"), "not delivered, and not counted: \(line)")
        withExtendedLifetime(folder) {}
    }

    @Test func aCommandEndedAtTheBoundTakesItsChildrenWithIt() throws {
        let folder = TemporaryFolder()
        let pidFile = folder.appending("child")
        let targets = TargetList(configFolder: folder.appending("config"))
        // As `sh -c '…'` wrappers do: the work runs in a child the shell waits for.
        try targets.add(Target(name: "t1", check: nil,
                               command: ["/bin/sh", "-c", "cat > /dev/null; sleep 300 & echo $! > '\(pidFile)'; wait"]))
        let receiver = Self.receiver(targets, folder, afterSecretSeconds: 1)
        let input = try Self.framedSecret()
        defer { close(input) }
        let line = receiver.run(input: input, say: { _ in true }, beforeDelivery: {})
        #expect(line.word == .failed && line.text.contains("was ended"), "\(line)")
        let text = try #require(try? String(contentsOfFile: pidFile, encoding: .utf8))
        let child = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        // Reaped by init (or whoever adopts it) soon after the kill.
        var gone = false
        for _ in 0..<50 where !gone {
            var st = stat()
            gone = stat("/proc/\(child)", &st) != 0 || ((try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? "").contains(") Z ")
            if !gone { usleep(100_000) }
        }
        #expect(gone, "the command's child \(child) outlived it")
        if !gone { kill(child, SIGKILL) }
        withExtendedLifetime(folder) {}
    }
}
