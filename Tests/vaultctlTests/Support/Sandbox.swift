#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// Which password the `VAULT_ASKPASS` program gives PAM, if there is one.
enum AskpassMode: Sendable {
    case correct
    case wrong
    /// The program exits 1 without printing.
    case declining
    /// `VAULT_ASKPASS` is not set (and the child has no terminal).
    case unset
}

/// One test's private world: a temporary folder holding its `XDG_STATE_HOME`, `XDG_CONFIG_HOME` and `HOME`,
/// pointed at a Secret Service bus (the shared keyring unless the test gives its own), with helpers to run
/// `vaultctl` and `secret-tool` there. The folder is removed on `deinit`.
final class Sandbox {
    let root: String
    /// `DBUS_SESSION_BUS_ADDRESS` for every process this sandbox runs.
    let busAddress: String

    /// A sandbox on the shared unlocked keyring.
    convenience init() throws {
        try self.init(busAddress: try Fixtures.sharedKeyring.get().busAddress)
    }

    /// A sandbox on a given bus (a private instance, or an address where nothing listens).
    init(busAddress: String) throws {
        root = try Fixtures.makeFolder("sb")
        self.busAddress = busAddress
        for sub in ["home", "state", "config"] { mkdir("\(root)/\(sub)", 0o700) }
    }

    convenience init(_ service: SecretServiceInstance) throws {
        try self.init(busAddress: service.busAddress)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    var home: String { "\(root)/home" }
    var stateHome: String { "\(root)/state" }
    var configHome: String { "\(root)/config" }
    /// `$XDG_STATE_HOME/vaultctl`: the device key and the sealed slot files.
    var stateFolder: String { "\(stateHome)/vaultctl" }
    var configFolder: String { "\(configHome)/vaultctl" }
    func slotFile(_ name: String) -> String { "\(stateFolder)/slots/\(name)" }

    /// Whether `args` may leave the recovery code (a fixed slot name) in the sync slot.
    static func putsTheRecoveryCodeInSync(_ args: [String]) -> Bool {
        let wantsSync = zip(args, args.dropFirst()).contains { ($0 == "--mode" || $0 == "--to") && $1 == "sync" }
            || args.contains("--mode=sync") || args.contains("--to=sync")
        return wantsSync && (args.starts(with: ["recovery"]) || args.starts(with: ["move", "recovery-code"]))
    }

    /// A slot name no other test uses, e.g. `roundtrip-4711-3-9f2c`, so tests can share one keyring.
    func uniqueSlot(_ hint: String = "slot") -> String {
        let counter = Sandbox.counter.add(1)
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(hint)-\(getpid())-\(counter)-\(random)"
    }

    private static let counter = Counter()

    /// The environment `vaultctl` runs with: no inherited variables, only these.
    func environment(askpass: AskpassMode) throws -> [String: String] {
        var env = environmentWithoutPAM()
        for (k, v) in try Fixtures.pamEnvironment.get() { env[k] = v }
        switch askpass {
        case .correct: env["VAULT_ASKPASS"] = "\(Fixtures.askpassFolder)/correct"
        case .wrong: env["VAULT_ASKPASS"] = "\(Fixtures.askpassFolder)/wrong"
        case .declining: env["VAULT_ASKPASS"] = "\(Fixtures.askpassFolder)/declining"
        case .unset: break
        }
        return env
    }

    /// Runs `vaultctl ARGS` here. With `prefix`, runs `prefix… VAULTCTL ARGS` instead (e.g. under `unshare`);
    /// `overriding` replaces or adds environment variables.
    func vaultctl(_ args: [String], stdin: Stdin = .null, askpass: AskpassMode = .correct,
                  prefix: [String] = [], overriding: [String: String] = [:],
                  timeout: Duration = ProcessRunner.defaultTimeout,
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        if Self.putsTheRecoveryCodeInSync(args), busAddress == (try? Fixtures.sharedKeyring.get().busAddress) {
            // Every sandbox on the shared keyring sees its `recovery-code` item: another test's generate
            // would take this code as its own and delete it (a CI failure that looked like lost data).
            Issue.record("the recovery code's slot name is fixed: a test that puts it in the sync slot needs a keyring of its own (Sandbox(SecretServiceInstance.start(.unlocked)))",
                         sourceLocation: sourceLocation)
        }
        let env = try environment(askpass: askpass).merging(overriding) { $1 }
        let command = prefix + [Paths.vaultctl] + args
        return ProcessRunner.run(command[0], Array(command.dropFirst()), environment: env, stdin: stdin, timeout: timeout,
                                 sourceLocation: sourceLocation).droppingPAMWrapperNoise()
    }

    /// `vaultctl store NAME [--mode MODE]` with the secret on stdin; expects success.
    func store(_ name: String, _ secret: [UInt8], mode: String? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let args = ["store", name] + (mode.map { ["--mode", $0] } ?? [])
        let r = try vaultctl(args, stdin: .bytes(secret), sourceLocation: sourceLocation)
        try #require(r.status == 0, "store \(name) \(mode ?? "") failed: \(r)", sourceLocation: sourceLocation)
    }

    /// `vaultctl read NAME` with the right password.
    func read(_ name: String, askpass: AskpassMode = .correct,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        try vaultctl(["read", name], askpass: askpass, sourceLocation: sourceLocation)
    }

    /// `vaultctl list` parsed: slot name → the modes it is listed in.
    func listed(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Set<String>] {
        try Self.parseList(try vaultctl(["list"], sourceLocation: sourceLocation), sourceLocation: sourceLocation)
    }

    /// What a `vaultctl list` run printed, parsed (it must have succeeded): slot name → the modes it is
    /// listed in.
    static func parseList(_ r: ProcessResult, sourceLocation: SourceLocation) throws -> [String: Set<String>] {
        try #require(r.status == 0, "list failed: \(r)", sourceLocation: sourceLocation)
        var out: [String: Set<String>] = [:]
        for line in r.stdoutText.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count == 2 else {
                Issue.record("list printed a line that is not NAME<TAB>MODE: \(line.debugDescription)", sourceLocation: sourceLocation)
                continue
            }
            out[String(fields[0]), default: []].insert(String(fields[1]))
        }
        return out
    }

    /// Runs `secret-tool ARGS` on this sandbox's bus.
    func secretTool(_ args: [String], stdin: Stdin = .null,
                    sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        ProcessRunner.run(Paths.tool("secret-tool"), args, environment: secretToolEnvironment, stdin: stdin,
                          sourceLocation: sourceLocation)
    }

    /// The environment of another Secret Service client in this sandbox (secret-tool, a script).
    var secretToolEnvironment: [String: String] {
        var env = Fixtures.baseEnvironment
        env["HOME"] = home
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return env
    }

    /// `secret-tool lookup xdg:schema org.vaultctl.Slot slot NAME`.
    func secretToolLookup(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        secretTool(["lookup", "xdg:schema", "org.vaultctl.Slot", "slot", name], sourceLocation: sourceLocation)
    }

    /// Puts an item for slot `name` in the keyring as another program would (`secret-tool store`, under
    /// vaultctl's schema and attribute), in `collection` when given, else the default one; expects success.
    func putKeyringItem(_ name: String, _ value: [UInt8], label: String, collection: String? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let put = secretTool(["store"] + (collection.map { ["--collection=\($0)"] } ?? []) +
                             ["--label=\(label)", "xdg:schema", "org.vaultctl.Slot", "slot", name],
                             stdin: .bytes(value), sourceLocation: sourceLocation)
        try #require(put.status == 0, "secret-tool store: \(put)", sourceLocation: sourceLocation)
    }

    /// Whether the sandbox's vaultctl folders were never created (a refused command wrote nothing).
    var wroteNothing: Bool { !Paths.exists(stateFolder) && !Paths.exists(configFolder) }
}

/// A process-wide counter for unique names. `Sendable` through its lock.
final class Counter: Sendable {
    private let value = Mutex(0)
    func add(_ n: Int) -> Int { value.withLock { $0 += n; return $0 } }
}
