#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// A set-up step of the end-to-end fixtures that failed; the test that needed it fails with this text.
struct SetupError: Error, CustomStringConvertible {
    let description: String
}

/// A private D-Bus session bus started by `scripts/secret-service.sh`, with gnome-keyring, a scripted
/// provider, or nothing on it.
///
/// Stop it with `stop()` (tests use `defer`); `deinit` stops it too, and the suite's guard process stops any
/// instance still running when the test process dies. `Sendable`: its only mutable state is behind a `Mutex`.
final class SecretServiceInstance: Sendable {
    enum Kind: String, Sendable {
        /// gnome-keyring with an unlocked `login` collection, the `default` alias pointing at it.
        case unlocked
        /// gnome-keyring started without `--unlock` on an empty keyring folder: no default collection.
        case noDefault = "no-default"
        /// A bus with no Secret Service provider at all.
        case busOnly = "bus-only"
        /// `scripts/fake-secret-service.py` instead of gnome-keyring: a real service object on the bus that
        /// answers as its scenario says (see the script for each one).
        case scriptedProvider = "scripted:provider"
        case scriptedPlainOnly = "scripted:plain-only"
        case scriptedBadKey = "scripted:bad-key"
        case scriptedErrorReply = "scripted:error-reply"
        case scriptedLockedEmpty = "scripted:locked-empty"
        case scriptedLockIgnored = "scripted:lock-ignored"
        case scriptedLockListed = "scripted:lock-listed"
        case scriptedSilentAfterAlias = "scripted:silent-after-alias"
        case scriptedPromptCreate = "scripted:prompt-create"
        case scriptedPromptSilent = "scripted:prompt-silent"
        case scriptedPromptDismissed = "scripted:prompt-dismissed"
        case scriptedItemLocked = "scripted:item-locked"
        case scriptedItemLockedAllow = "scripted:item-locked-allow"
        case scriptedExitMidCall = "scripted:exit-mid-call"
        case scriptedAliasRace = "scripted:alias-race"
        case scriptedNamesClients = "scripted:names-clients"
        /// KeePassXC headless on a new database, access confirmation off (collection 'vaultctl test').
        case keepassxc
        /// The same with KeePassXC's default: every read of an item needs the person's confirmation.
        case keepassxcConfirm = "keepassxc-confirm"
        /// KeePassXC as `keepassxc`, its database made with what vaultctl recommends: no Recycle Bin, no History.
        case keepassxcNoCopies = "keepassxc-no-copies"

        var isKeePassXC: Bool { rawValue.hasPrefix("keepassxc") }
    }

    let kind: Kind
    /// The folder given to the script (bus socket, keyring files, `env`, `pids`).
    let folder: String
    /// `DBUS_SESSION_BUS_ADDRESS` for this bus.
    let busAddress: String
    private let stopped = Mutex(false)

    /// The keyring password used for `unlocked` instances.
    static let keyringPassword = "e2e-keyring-password"

    private init(kind: Kind, folder: String, busAddress: String) {
        self.kind = kind
        self.folder = folder
        self.busAddress = busAddress
    }

    /// Starts a bus (and provider) in a new folder under the suite's temporary root. `display`: an X display
    /// where KeePassXC shows its dialogs (for a test to answer them), instead of none.
    static func start(_ kind: Kind, display: String? = nil) throws -> SecretServiceInstance {
        let folder = try Fixtures.makeFolder("kr")
        var args = ["start", folder, kind.rawValue]
        if kind == .unlocked || kind.isKeePassXC { args.append(keyringPassword) }
        let startEnvironment = Fixtures.baseEnvironment.merging(display.map { ["KEEPASSXC_DISPLAY": $0] } ?? [:]) { $1 }
        let result = ProcessRunner.run(Paths.secretServiceScript, args, environment: startEnvironment)
        guard result.status == 0 else {
            _ = ProcessRunner.run(Paths.secretServiceScript, ["stop", folder], environment: Fixtures.baseEnvironment)
            throw SetupError(description: "scripts/secret-service.sh start \(kind.rawValue) failed: \(result)")
        }
        let env = try EnvFile.load("\(folder)/env")
        guard let address = env["DBUS_SESSION_BUS_ADDRESS"] else {
            throw SetupError(description: "\(folder)/env has no DBUS_SESSION_BUS_ADDRESS")
        }
        return SecretServiceInstance(kind: kind, folder: folder, busAddress: address)
    }

    /// Stops the bus and provider (once; later calls do nothing).
    func stop() {
        let already = stopped.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        if already { return }
        _ = ProcessRunner.run(Paths.secretServiceScript, ["stop", folder], environment: Fixtures.baseEnvironment)
    }

    deinit { stop() }

    /// What the scripted provider said it did ("prompted", "dismissed", …), one event a line.
    var providerEvents: [String] {
        ((try? String(contentsOfFile: "\(folder)/keyring.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Environment for a client of this bus (secret-tool, gdbus).
    var clientEnvironment: [String: String] {
        Fixtures.baseEnvironment.merging(["DBUS_SESSION_BUS_ADDRESS": busAddress]) { $1 }
    }

    /// What KeePassXC's database file holds now, as `keepassxc-cli export` prints it (KeePassXC's XML, values in
    /// the clear: History and Recycle Bin included); empty when it cannot be read.
    func keepassxcExport() -> String {
        ProcessRunner.run(Paths.tool("keepassxc-cli"), ["export", "-q", "\(folder)/db.kdbx"],
                          environment: Fixtures.baseEnvironment, stdin: .text("\(Self.keyringPassword)\n"),
                          timeout: .seconds(30)).stdoutText
    }

    /// The export once `settled` holds for it and the file has not changed for a second: KeePassXC saves its
    /// database a moment after each change, and a change it takes while a save runs (its event loop answers
    /// D-Bus meanwhile) gets no History item and is saved only with the next change (2.7.4:
    /// `Database::writeDatabase` turns its modified signal off), so a test waits for one save to end before
    /// it makes the next change. Waits at most 15 s for each, then gives the last export as it is (the
    /// test's own expectations then fail).
    func keepassxcExport(once settled: (String) -> Bool) -> String {
        var export = keepassxcExport()
        for _ in 0..<60 where !settled(export) {
            usleep(250_000)
            export = keepassxcExport()
        }
        guard settled(export) else { return export }
        var last = modificationTime("\(folder)/db.kdbx")
        var quiet = 0
        for _ in 0..<60 where quiet < 4 {
            usleep(250_000)
            let now = modificationTime("\(folder)/db.kdbx")
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
        return keepassxcExport()
    }

    private func modificationTime(_ path: String) -> [Int] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
        return [Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), Int(st.st_ino)]
    }

    /// Locks the `login` collection with the Secret Service `Lock` method (`secret-tool lock` hangs here).
    func lockLoginCollection() -> ProcessResult {
        ProcessRunner.run(Paths.tool("gdbus"), [
            "call", "--session", "--dest", "org.freedesktop.secrets",
            "--object-path", "/org/freedesktop/secrets",
            "--method", "org.freedesktop.Secret.Service.Lock",
            "['/org/freedesktop/secrets/collection/login']",
        ], environment: clientEnvironment, timeout: .seconds(15))
    }
}

/// A property of a Secret Service collection (`Locked`, `Label`), asked as another client would: `gdbus`
/// reads it on the bus of `environment` (a provider's `clientEnvironment`).
enum CollectionProperty {
    static let login = "/org/freedesktop/secrets/collection/login"

    /// The `gdbus` run; its output holds the value (`(<true>,)`, `(<'Login'>,)`). `answerWithin`: gdbus's own
    /// timeout for the call, in seconds (its default, 25 s, when nil).
    static func read(_ property: String, of collection: String = login, environment: [String: String],
                     answerWithin: Int? = nil, timeout: Duration = .seconds(15)) -> ProcessResult {
        ProcessRunner.run(Paths.tool("gdbus"), ["call", "--session"] + (answerWithin.map { ["--timeout", "\($0)"] } ?? []) + [
            "--dest", "org.freedesktop.secrets", "--object-path", collection,
            "--method", "org.freedesktop.DBus.Properties.Get", "org.freedesktop.Secret.Collection", property,
        ], environment: environment, timeout: timeout)
    }
}

extension Sandbox {
    /// Runs `body` with a sandbox on a private unlocked gnome-keyring of its own (for a test that locks it,
    /// watches its bus or restarts it), which is stopped when `body` returns or throws.
    static func onPrivateKeyring<T>(_ body: (SecretServiceInstance, Sandbox) throws -> T) throws -> T {
        let keyring = try SecretServiceInstance.start(.unlocked)
        defer { keyring.stop() }
        return try body(keyring, try Sandbox(keyring))
    }
}
