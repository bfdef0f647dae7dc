import Testing
@testable import Slots

/// What vaultctl does when the peer on the bus misbehaves: each case is scripted with `FakeSecretService`,
/// and vaultctl must answer with the right exit code and words, within seconds, and never read a failure as
/// "empty". (The same client against a real gnome-keyring is in the other suites.)
@Suite("Secret Service protocol failures")
struct SecretServiceProtocolTests {
    static let bound: Duration = .seconds(15)

    @Test func refusedCredentialsAreUnavailableNotEmpty() throws {
        let bus = try FakeSecretService(rejectCredentials: true) { _ in .silence }
        let sb = try Sandbox(busAddress: bus.address)
        let name = sb.uniqueSlot("rejected")
        let status = try sb.vaultctl(["status", name])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("refused vaultctl's credentials"), "\(status)")
        let read = try sb.read(name)
        #expect(read.status == 69, "\(read)")
        #expect(read.elapsed < Self.bound)
    }

    /// A provider that offers only the `plain` algorithm: vaultctl never sends a secret unencrypted.
    @Test func aProviderWithoutEncryptedTransferIsRefused() throws {
        let bus = try FakeSecretService(answer: FakeSecretService.provider { _ in
            .error(name: "org.freedesktop.DBus.Error.NotSupported", message: "Algorithm is not supported")
        })
        let sb = try Sandbox(busAddress: bus.address)
        let name = sb.uniqueSlot("plain")
        let read = try sb.read(name)
        #expect(read.status == 69, "\(read)")
        #expect(read.stderr.contains("does not offer the encrypted transfer"), "\(read.stderr)")
        #expect(read.stdout.isEmpty)
        let store = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text("not-to-be-sent-in-clear"))
        #expect(store.status == 69, "\(store)")
    }

    @Test func anInvalidServerKeyIsRefused() throws {
        let bus = try FakeSecretService(answer: FakeSecretService.provider { _ in
            .reply(signature: "vo", [.variant(.bytes([0x01])), .objectPath("/org/freedesktop/secrets/session/s1")])
        })
        let sb = try Sandbox(busAddress: bus.address)
        let read = try sb.read(sb.uniqueSlot("badkey"))
        #expect(read.status == 69, "\(read)")
        #expect(read.stderr.contains("key exchange is not valid"), "\(read.stderr)")
    }

    /// An error reply is "could not look", in the provider's words kept to one line.
    @Test func anErrorReplyIsUnknownInOneLine() throws {
        let bus = try FakeSecretService { call in
            call.member == "ReadAlias"
                ? .reply(signature: "o", [.objectPath(FakeSecretService.collection)])
                : .error(name: "org.freedesktop.DBus.Error.AccessDenied", message: "denied\nby the fake\tprovider")
        }
        let sb = try Sandbox(busAddress: bus.address)
        let name = sb.uniqueSlot("denied")
        let status = try sb.vaultctl(["status", name])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("denied by the fake provider"), "\(status)")
        #expect(status.stdoutText.split(separator: "\n").count == 1)
        let delete = try sb.vaultctl(["delete", name])
        #expect(delete.status == 69, "could not look, so not 'empty': \(delete)")
    }

    /// `lock` says the collection is locked only when the provider's Lock answer lists it.
    @Test func lockSaysTheCollectionIsLockedOnlyWhenTheProviderSaysSo() throws {
        for lockedList in [[], [FakeSecretService.collection]] {
            let bus = try FakeSecretService { call in
                switch call.member {
                case "ReadAlias": return .reply(signature: "o", [.objectPath(FakeSecretService.collection)])
                case "Get": return .reply(signature: "v", [.variant(.boolean(false))])
                case "Lock": return .reply(signature: "aoo", [.array(element: "o", lockedList.map { .objectPath($0) }), .objectPath("/")])
                default: return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "not scripted")
                }
            }
            let sb = try Sandbox(busAddress: bus.address)
            let lock = try sb.vaultctl(["lock"])
            #expect(lock.status == 0, "the vault itself is locked either way: \(lock)")
            if lockedList.isEmpty {
                #expect(lock.stderr.contains("the Secret Service collection was not locked"), "\(lock.stderr)")
                #expect(lock.stderr.contains("did not say it locked the collection"), "\(lock.stderr)")
            } else {
                #expect(lock.stderr.contains("and so is the Secret Service's default collection"), "\(lock.stderr)")
            }
        }
    }

    @Test func aReplyCutShortIsUnavailable() throws {
        let bus = try FakeSecretService { call in
            call.member == "ReadAlias" ? .reply(signature: "o", [.objectPath(FakeSecretService.collection)]) : .cutShort
        }
        let sb = try Sandbox(busAddress: bus.address)
        let status = try sb.vaultctl(["status", sb.uniqueSlot("cut")])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("closed the connection"), "\(status)")
        #expect(status.elapsed < Self.bound)
    }

    /// Authenticated, then silent: every operation gives up within the timeout.
    @Test func aProviderThatStopsAnsweringIsUnavailableWithinTheTimeout() throws {
        let bus = try FakeSecretService { _ in .silence }
        let sb = try Sandbox(busAddress: bus.address)
        let status = try sb.vaultctl(["status", sb.uniqueSlot("mute")])
        #expect(status.status == 0 && status.stdoutText.contains("did not answer within 5 s"), "\(status)")
        #expect(status.elapsed < Self.bound)
    }

    /// Replies arrive in 7-byte pieces here; a found item in an unlocked collection is "in-slot".
    @Test func repliesInPiecesAreReassembled() throws {
        let bus = try FakeSecretService(answer: FakeSecretService.provider { _ in .silence })
        let sb = try Sandbox(busAddress: bus.address)
        let status = try sb.vaultctl(["status", sb.uniqueSlot("pieces")])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
        #expect(status.stdoutText.contains("collection 'Fake' as item 'Fake'"), "\(status)")
    }

    /// A locked collection whose search finds nothing (KeePassXC shows nothing of a locked database) cannot
    /// say the slot is empty.
    @Test func nothingFoundInALockedCollectionIsNotEmpty() throws {
        let bus = try FakeSecretService { call in
            switch call.member {
            case "ReadAlias": return .reply(signature: "o", [.objectPath(FakeSecretService.collection)])
            case "SearchItems": return .reply(signature: "ao", [.array(element: "o", [])])
            case "Get": return .reply(signature: "v", [.variant(.boolean(true))])
            default: return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "not scripted")
            }
        }
        let sb = try Sandbox(busAddress: bus.address)
        let name = sb.uniqueSlot("lockedempty")
        let status = try sb.vaultctl(["status", name])
        #expect(status.status == 0 && status.stdoutText.hasPrefix("unknown:"), "\(status)")
        #expect(status.stdoutText.contains("locked"), "\(status)")
        #expect(try sb.read(name).status == 69)
        let list = try sb.vaultctl(["list"])
        #expect(list.status == 0 && list.stderr.contains("locked"), "\(list)")
    }
}
