#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// What the whole end-to-end suite shares, each made lazily and once: a temporary root folder, a PAM stack
/// for the invoking user under pam_wrapper, askpass scripts, and one unlocked keyring.
///
/// Everything lives under `root`. At exit the shared keyring is stopped and the root removed; a guard
/// process (started with the root) does the same if the test process dies without running exit handlers.
enum Fixtures {
    /// The environment every child starts from: nothing inherited from the caller.
    static let baseEnvironment: [String: String] = [
        "PATH": Paths.systemPATH,
        "LANG": "C.UTF-8",
    ]

    /// The suite's temporary root, e.g. `/tmp/vaultctl-e2e.Ab12Cd`. Kept short: D-Bus socket paths are
    /// limited to 108 bytes.
    static let root: String = {
        var template = Array("/tmp/vaultctl-e2e.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: errno \(errno)") }
        let path = String(cString: made)
        startGuard(root: path)
        atexit { Fixtures.cleanUpAtExit() }
        return path
    }()

    /// A new private folder under the root (`prefix.XXXXXX`).
    static func makeFolder(_ prefix: String) throws -> String {
        var template = Array("\(root)/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw SetupError(description: "mkdtemp under \(root) failed: errno \(errno)")
        }
        return String(cString: made)
    }

    /// The invoking user's login name (PAM authenticates the real uid's user).
    static let user: String = {
        guard let pw = getpwuid(getuid()), let name = pw.pointee.pw_name else { fatalError("no passwd entry for uid \(getuid())") }
        return String(cString: name)
    }()

    /// The password the test PAM stack accepts for `user`.
    static let pamPassword = "e2e-pam-password"
    static let wrongPassword = "not-the-e2e-password"

    /// `LD_PRELOAD`, `PAM_WRAPPER`, `PAM_WRAPPER_SERVICE_DIR` from `scripts/pam-stack.sh`.
    static let pamEnvironment: Result<[String: String], SetupError> = {
        do {
            let folder = try makeFolder("pam")
            let result = ProcessRunner.run(Paths.pamStackScript, [folder, user, pamPassword], environment: baseEnvironment)
            guard result.status == 0 else {
                return .failure(SetupError(description: "scripts/pam-stack.sh failed: \(result)"))
            }
            return .success(try EnvFile.load("\(folder)/env"))
        } catch let e as SetupError {
            return .failure(e)
        } catch {
            return .failure(SetupError(description: "\(error)"))
        }
    }()

    /// Askpass programs: one prints the right password, one a wrong one, one declines (exits 1).
    static let askpassFolder: String = {
        guard let folder = try? makeFolder("askpass") else { fatalError("could not make the askpass folder") }
        let scripts = [
            "correct": "#!/bin/sh\nprintf '%s\\n' '\(pamPassword)'\n",
            "wrong": "#!/bin/sh\nprintf '%s\\n' '\(wrongPassword)'\n",
            "declining": "#!/bin/sh\nexit 1\n",
        ]
        for (name, text) in scripts {
            let path = "\(folder)/\(name)"
            guard FileText.write(path, text, mode: 0o700), chmod(path, 0o700) == 0 else {
                fatalError("could not write \(path)")
            }
        }
        return folder
    }()

    /// The keyring most tests share. Tests use unique slot names in it.
    static let sharedKeyring: Result<SecretServiceInstance, SetupError> = {
        do {
            return .success(try SecretServiceInstance.start(.unlocked))
        } catch let e as SetupError {
            return .failure(e)
        } catch {
            return .failure(SetupError(description: "\(error)"))
        }
    }()

    /// Stops every bus still running under the root (the shared keyring, and any private one a crashed
    /// test left), then removes the root. Never touches `sharedKeyring` itself, so nothing starts at exit.
    private static func cleanUpAtExit() {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for entry in entries where entry.hasPrefix("kr.") && Paths.exists("\(root)/\(entry)/pids") {
            _ = ProcessRunner.run(Paths.secretServiceScript, ["stop", "\(root)/\(entry)"], environment: baseEnvironment)
        }
        for entry in entries where entry.hasPrefix("tpm.") && Paths.exists("\(root)/\(entry)/pids") {
            _ = ProcessRunner.run(Paths.swtpmScript, ["stop", "\(root)/\(entry)"], environment: baseEnvironment)
        }
        for entry in entries where entry.hasPrefix("ns.") && Paths.exists("\(root)/\(entry)/ns-receiver") {
            _ = ProcessRunner.run(Paths.sshdNetnsScript, ["stop", "\(root)/\(entry)"], environment: baseEnvironment)
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A detached shell that waits for this process to end, then stops every bus started under `root`
    /// and removes it. Normally the exit handler has done that already and it finds nothing to do.
    private static func startGuard(root: String) {
        let script = """
        while kill -0 "$1" 2>/dev/null; do sleep 1; done
        for d in "$3"/kr.*; do [ -f "$d/pids" ] && "$2" stop "$d"; done
        for d in "$3"/tpm.*; do [ -f "$d/pids" ] && "$4" stop "$d"; done
        for d in "$3"/ns.*; do [ -f "$d/ns-receiver" ] && "$5" stop "$d"; done
        rm -rf "$3"
        """
        ProcessRunner.startDetached(Paths.tool("sh"), ["-c", script, "vaultctl-e2e-guard", "\(getpid())", Paths.secretServiceScript,
                                                    root, Paths.swtpmScript, Paths.sshdNetnsScript],
                                    environment: ["PATH": Paths.systemPATH])
    }
}
