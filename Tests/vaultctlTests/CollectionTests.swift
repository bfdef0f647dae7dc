#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The sync slot looks in every Secret Service collection, not only the default one (libsecret searches them
/// all): a value in another collection is found, named, read and deleted, never reported as absent. And
/// whatever another program stored under our attributes is read only within 1 byte … 64 KiB.
/// Each test has its own gnome-keyring, whose `session` collection (label '') is the second collection.
@Suite("Secret Service collections", .tags(.needsServices))
struct CollectionTests {
    static let session = "/org/freedesktop/secrets/collection/session"

    /// Makes `collection` the default one, as Seahorse's "Set as default" does.
    private func makeDefault(_ keyring: SecretServiceInstance, _ collection: String) throws {
        let r = ProcessRunner.run(Paths.tool("gdbus"), [
            "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
            "--method", "org.freedesktop.Secret.Service.SetAlias", "default", collection,
        ], environment: keyring.clientEnvironment, timeout: .seconds(15))
        try #require(r.status == 0, "SetAlias failed: \(r)")
    }

    /// The seed's lie: "nothing there" from a check that looked in the wrong place.
    @Test func aValueInACollectionThatIsNoLongerTheDefaultIsStillThere() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("moved-default")
            let secret = TestData.textSecret(name)
            try sb.store(name, secret, mode: "sync")
            try makeDefault(keyring, Self.session)

            let status = try sb.vaultctl(["status", name])
            #expect(status.status == 0 && status.stdoutText.hasPrefix("in-slot:"), "\(status)")
            #expect(status.stdoutText.contains("collection 'Login'"), "\(status)")
            #expect(try sb.listed()[name] == ["sync"])
            let read = try sb.read(name)
            #expect(read.status == 0 && read.stdout == secret, "\(read)")

            let delete = try sb.vaultctl(["delete", name])
            #expect(delete.status == 0, "\(delete)")
            #expect(sb.secretToolLookup(name).stdout.isEmpty, "delete left the item in the keyring")
            #expect(try sb.vaultctl(["status", name]).stdoutText.hasPrefix("none:"))
        }
    }

    /// A collection with an empty label is named by its path, the provider's own name for it.
    @Test func anItemInAnotherCollectionIsNamedAndRead() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            let name = sb.uniqueSlot("in-session")
            try sb.putKeyringItem(name, Array("stored-elsewhere".utf8), label: "theirs", collection: "session")
            let status = try sb.vaultctl(["status", name])
            #expect(status.stdoutText.hasPrefix("in-slot:"), "\(status)")
            #expect(status.stdoutText.contains("collection 'session' as item 'theirs'"), "\(status)")
            let read = try sb.read(name)
            #expect(read.status == 0 && read.stdoutText == "stored-elsewhere", "\(read)")
        }
    }

    /// Copies in two collections: reads and status take the newest, status says there are two, and delete
    /// removes both.
    @Test func copiesInTwoCollectionsAreReadNewestFirstAndAllDeleted() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            let name = sb.uniqueSlot("two-copies")
            try sb.putKeyringItem(name, Array("the older copy".utf8), label: "old", collection: "session")
            sleep(1)  // Modified has a resolution of seconds
            try sb.store(name, Array("the newer copy".utf8), mode: "sync")

            let status = try sb.vaultctl(["status", name])
            #expect(status.stdoutText.contains("newest of 2 items"), "\(status)")
            #expect(status.stdoutText.contains("collection 'Login'"), "\(status)")
            let read = try sb.read(name)
            #expect(read.status == 0 && read.stdoutText == "the newer copy", "\(read)")

            let delete = try sb.vaultctl(["delete", name])
            #expect(delete.status == 0, "\(delete)")
            #expect(sb.secretToolLookup(name).stdout.isEmpty, "a copy was left behind")
        }
    }

    /// An item under our schema whose slot attribute is no valid slot name is not listed, and list says so.
    @Test func listSaysHowManyItemsItPassedOver() throws {
        try Sandbox.onPrivateKeyring { _, sb in
            for bad in ["../escape", "has space"] {
                try sb.putKeyringItem(bad, Array("x".utf8), label: "bad")
            }
            let list = try sb.vaultctl(["list"])
            #expect(list.status == 0 && list.stdoutText.isEmpty, "\(list)")
            #expect(list.stderr.contains("warning: 2 Secret Service items with vaultctl's schema have a slot attribute that is not a valid slot name"), "\(list.stderr)")
        }
    }

    /// Another program may store anything under our attributes: an empty or oversized value is refused with 65,
    /// naming the item, and nothing is printed.
    @Test(arguments: [0, 70_000])
    func aValueOutsideTheBoundsIsRefused(_ size: Int) throws {
        try Sandbox.onPrivateKeyring { _, sb in
            let name = sb.uniqueSlot("bounds")
            // secret-tool reads at most 8 KiB from stdin, so the item is made over D-Bus (dbus-python, the
            // `plain` session that any program in the session may use).
            let store = ProcessRunner.run("/usr/bin/python3", ["-c", """
                import dbus, sys
                bus = dbus.SessionBus()
                service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"),
                                         "org.freedesktop.Secret.Service")
                _, session = service.OpenSession("plain", dbus.String("", variant_level=1))
                collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", service.ReadAlias("default")),
                                            "org.freedesktop.Secret.Collection")
                properties = {"org.freedesktop.Secret.Item.Label": "odd",
                              "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(
                                  {"xdg:schema": "org.vaultctl.Slot", "slot": sys.argv[1]}, signature="ss")}
                value = dbus.ByteArray(b"x" * int(sys.argv[2]))
                collection.CreateItem(properties, (session, dbus.ByteArray(b""), value, "text/plain"), True)
                """, name, String(size)], environment: sb.secretToolEnvironment, timeout: .seconds(15))
            try #require(store.status == 0, "\(store)")
            let read = try sb.read(name)
            read.expectFailure(65, saying: "the Secret Service item /org/freedesktop/secrets/collection/login/")
            #expect(read.stderr.contains("outside the 1 to 65536 bytes"), "\(read.stderr)")
        }
    }
}
