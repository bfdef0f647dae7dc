#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// What crosses the bus: a `dbus-monitor` of a private bus with a real gnome-keyring, recording every message
/// of a store and a read, shows the encrypted session algorithm negotiated and never the secret's bytes.
@Suite("Secret Service encryption on the bus")
struct SecretServiceEncryptionTests {
    @Test func aStoreAndAReadNegotiateTheEncryptedSessionAndNeverShowTheSecret() throws {
        let keyring = try SecretServiceInstance.start(.unlocked)
        defer { keyring.stop() }
        let sb = try Sandbox(keyring)
        let capture = "\(sb.root)/bus.pcap"
        // dbus-monitor in the background (it runs until killed); its pid comes back on stdout.
        let started = ProcessRunner.run("/bin/sh", ["-c", "\"$0\" --address \"$1\" --pcap >\"$2\" 2>/dev/null & echo $!",
                                                    Paths.tool("dbus-monitor"), keyring.busAddress, capture],
                                        environment: keyring.clientEnvironment, timeout: .seconds(10))
        let pid = try #require(pid_t(started.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "\(started)")
        defer { kill(pid, SIGKILL) }
        // It is watching once it has written the capture header and the bus's answer to BecomeMonitor.
        for _ in 0..<500 where ((try? FileManager.default.attributesOfItem(atPath: capture))?[.size] as? Int ?? 0) <= 24 {
            usleep(20_000)
        }

        let name = sb.uniqueSlot("onthewire")
        let secret = Array("Zq8-wire-check-\(UInt32.random(in: 0...UInt32.max))-7f3a9c".utf8)
        try sb.store(name, secret, mode: "sync")
        let read = try sb.read(name)
        #expect(read.status == 0 && read.stdout == secret, "\(read)")
        usleep(200_000)  // the monitor writes each message as it sees it
        kill(pid, SIGTERM)

        let seen = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capture)))
        for expected in ["OpenSession", "dh-ietf1024-sha256-aes128-cbc-pkcs7", "CreateItem", "GetSecret", name] {
            #expect(contains(seen, Array(expected.utf8)), "the capture has no '\(expected)' (\(seen.count) bytes)")
        }
        #expect(!contains(seen, secret), "the secret crossed the bus in clear")
        #expect(!contains(seen, Array(secret.prefix(12))), "part of the secret crossed the bus in clear")
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
