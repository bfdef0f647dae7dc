#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// What crosses the bus: a `dbus-monitor` of a private bus with a real gnome-keyring, recording every message
/// of a store and a read, shows the encrypted session algorithm negotiated and never the secret's bytes.
@Suite("Secret Service encryption on the bus", .tags(.needsServices))
struct SecretServiceEncryptionTests {
    @Test func aStoreAndAReadNegotiateTheEncryptedSessionAndNeverShowTheSecret() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let monitor = try BusMonitor(keyring, writingTo: "\(sb.root)/bus.pcap", format: "--pcap")

            let name = sb.uniqueSlot("onthewire")
            let secret = Array("Zq8-wire-check-\(UInt32.random(in: 0...UInt32.max))-7f3a9c".utf8)
            try sb.store(name, secret, mode: "sync")
            let read = try sb.read(name)
            #expect(read.status == 0 && read.stdout == secret, "\(read)")
            try monitor.catchUpAndStop(after: "GetId")

            let seen = monitor.bytes
            for expected in ["OpenSession", "dh-ietf1024-sha256-aes128-cbc-pkcs7", "CreateItem", "GetSecret", name] {
                #expect(BusMonitor.contains(seen, Array(expected.utf8)), "the capture has no '\(expected)' (\(seen.count) bytes)")
            }
            #expect(!BusMonitor.contains(seen, secret), "the secret crossed the bus in clear")
            #expect(!BusMonitor.contains(seen, Array(secret.prefix(12))), "part of the secret crossed the bus in clear")
        }
    }
}
