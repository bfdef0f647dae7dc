#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The password a counting askpass program gives.
enum CountedPassword: String, Sendable {
    case correct, wrong
    /// A wrong password, given after 0.3 s: parallel attempts all reach the prompt before any of them fails.
    case wrongSlowly
}

/// Where a session seems to come from, as the SSH variables say (they can only make a verdict stricter).
enum SessionOrigin {
    /// A Tailscale client (100.64.0.0/10): remote.
    static let tailscale = ["SSH_CONNECTION": "100.64.7.9 50522 100.100.1.1 22"]
    /// A client on the LAN: nearby.
    static let lan = ["SSH_CONNECTION": "192.168.1.20 50522 192.168.1.1 22"]
}

/// A program given to `supply … -- COMMAND`: writes its stdin, its arguments (one per line) and `env` to
/// files in its own folder, then exits with a chosen status.
struct Consumer {
    let path: String
    let folder: String

    /// Whether it ran at all.
    var ran: Bool { Paths.exists("\(folder)/stdin") }
    var stdin: [UInt8]? { FileBytes.read("\(folder)/stdin") }
    var arguments: [UInt8] { FileBytes.read("\(folder)/args") ?? [] }
    var environment: [UInt8] { FileBytes.read("\(folder)/env") ?? [] }
}

/// A `--if-locked` check: a script that appends a line to a file each time it runs.
struct CheckScript {
    let path: String
    let runsFile: String

    var runs: Int { (FileText.read(runsFile) ?? "").split(separator: "\n").count }
}

extension Sandbox {
    /// The file the counting askpass programs append one line to each time they are called.
    var askpassLog: String { "\(root)/askpass.log" }

    /// How many times a counting askpass program was called (that is, how many prompts there were).
    var askpassCalls: Int { (FileText.read(askpassLog) ?? "").split(separator: "\n").count }

    /// Forgets the calls so far (after set-up).
    func resetAskpassLog() { unlink(askpassLog) }

    /// A `VAULT_ASKPASS` program that notes each call in `askpassLog`, then prints the right or a wrong password.
    func countingAskpass(_ password: CountedPassword) throws -> String {
        let path = "\(root)/askpass-\(password.rawValue)"
        if !Paths.exists(path) {
            let answer = password == .correct ? Fixtures.pamPassword : Fixtures.wrongPassword
            let pause = password == .wrongSlowly ? "sleep 0.3\n" : ""
            try writeScript(path, "echo \"called\" >> '\(askpassLog)'\n\(pause)printf '%s\\n' '\(answer)'\n")
        }
        return path
    }

    /// Runs `vaultctl ARGS` with a counting askpass program.
    func vaultctlCounted(_ args: [String], password: CountedPassword = .correct, stdin: Stdin = .null,
                         prefix: [String] = [], overriding: [String: String] = [:],
                         sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let env = ["VAULT_ASKPASS": try countingAskpass(password)].merging(overriding) { $1 }
        // A run repeated after a pam_wrapper race starts over: the askpass calls of the lost run are not counted.
        let callsBefore = FileText.read(askpassLog) ?? ""
        return try Sandbox.repeatingPAMWrapperRaces {
            if (FileText.read(askpassLog) ?? "") != callsBefore {
                if callsBefore.isEmpty { unlink(askpassLog) } else { _ = FileText.write(askpassLog, callsBefore) }
            }
            return try vaultctl(args, stdin: stdin, prefix: prefix, overriding: env, sourceLocation: sourceLocation)
        }
    }

    /// `vaultctl read NAME` with one of the fixed askpass programs (not counted), repeated on a pam_wrapper race.
    func readRepeatingRaces(_ name: String, askpass: AskpassMode = .correct,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        try Sandbox.repeatingPAMWrapperRaces { try read(name, askpass: askpass, sourceLocation: sourceLocation) }
    }

    /// Whether a run failed only because pam_wrapper lost a race: with several processes starting PAM at once,
    /// one may remove another's `/tmp/pam.X` folder as stale, and that process's `pam_start` fails, or its
    /// copy of the `vaultctl` service is gone and libpam falls back to the test `other` service (whose passdb
    /// does not exist: "cannot retrieve authentication info"). That is the test PAM stack, not vaultctl;
    /// nothing was asked or counted yet (the conversation never started). vaultctl exits 78 then; a program
    /// that ran it (git, for a credential helper) exits with its own status, so any failure with those words.
    /// `anyStatus`: judged by the words alone, for a program that ignores its helper's failure (git's
    /// `credential reject` and `approve` exit 0 whatever the helper did).
    static func isPAMWrapperRace(_ r: ProcessResult, anyStatus: Bool = false) -> Bool {
        (r.status != 0 || anyStatus) && (r.stderr.contains("PAM could not start")
                           || r.stderr.contains("PAM failed for service 'vaultctl': Authentication service cannot retrieve authentication info"))
    }

    /// Runs `body` again (at most 4 times in all, a moment apart) while it fails with a pam_wrapper race.
    static func repeatingPAMWrapperRaces(anyStatus: Bool = false, _ body: () throws -> ProcessResult) rethrows -> ProcessResult {
        var r = try body()
        for _ in 0..<3 where isPAMWrapperRace(r, anyStatus: anyStatus) {
            print("pam_wrapper race, running again: \(r.stderr)")  // visible in the test log, so a trend shows
            usleep(100_000)
            r = try body()
        }
        return r
    }

    /// `vaultctl store NAME --allow-supply` with the secret on stdin; expects success.
    func storeSuppliable(_ name: String, _ secret: [UInt8], mode: String = "device",
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try vaultctl(["store", name, "--mode", mode, "--allow-supply"], stdin: .bytes(secret),
                             sourceLocation: sourceLocation)
        try #require(r.status == 0, "store \(name) --allow-supply failed: \(r)", sourceLocation: sourceLocation)
    }

    /// A new consumer program in this sandbox.
    func makeConsumer(exiting status: Int32 = 0) throws -> Consumer {
        let folder = try makeSubfolder("consumer")
        let path = "\(folder)/consumer"
        try writeScript(path, """
            cat > '\(folder)/stdin'
            printf '%s\\n' "$@" > '\(folder)/args'
            env > '\(folder)/env'
            exit \(status)

            """)
        return Consumer(path: path, folder: folder)
    }

    /// A check that notes each run and exits with `status`.
    func makeCheck(exiting status: Int32) throws -> CheckScript {
        let folder = try makeSubfolder("check")
        let check = CheckScript(path: "\(folder)/check", runsFile: "\(folder)/runs")
        try writeScript(check.path, "echo run >> '\(check.runsFile)'\nexit \(status)\n")
        return check
    }

    /// A check that exits 0 on its first two runs (before the prompt, before delivery) and 1 after: the
    /// delivered secret unlocked the target.
    func makeCheckUnlockedByDelivery() throws -> CheckScript {
        let folder = try makeSubfolder("check")
        let check = CheckScript(path: "\(folder)/check", runsFile: "\(folder)/runs")
        try writeScript(check.path, "echo run >> '\(check.runsFile)'\n[ \"$(wc -l < '\(check.runsFile)')\" -le 2 ]\n")
        return check
    }

    /// `makeCheckUnlockedByDelivery`, also appending whatever it finds on its standard input to `stdinFile`.
    func makeStdinRecordingCheckUnlockedByDelivery() throws -> (check: CheckScript, stdinFile: String) {
        let folder = try makeSubfolder("check")
        let check = CheckScript(path: "\(folder)/check", runsFile: "\(folder)/runs")
        let stdinFile = "\(folder)/stdin"
        try writeScript(check.path, "cat >> '\(stdinFile)'\necho run >> '\(check.runsFile)'\n[ \"$(wc -l < '\(check.runsFile)')\" -le 2 ]\n")
        return (check, stdinFile)
    }

    /// A check that exits 0 on its first run and 1 on every later one: the target was unlocked meanwhile.
    func makeUnlockingCheck() throws -> CheckScript {
        let folder = try makeSubfolder("check")
        let check = CheckScript(path: "\(folder)/check", runsFile: "\(folder)/runs")
        try writeScript(check.path, """
            if [ -e '\(check.runsFile)' ]; then echo run >> '\(check.runsFile)'; exit 1; fi
            echo run >> '\(check.runsFile)'
            exit 0

            """)
        return check
    }

    /// Writes `$XDG_CONFIG_HOME/vaultctl/policy.json` (folder 0700, file 0600).
    func writePolicy(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        mkdir(configFolder, 0o700)
        try #require(chmod(configFolder, 0o700) == 0, sourceLocation: sourceLocation)
        let path = policyPath
        try #require(FileText.write(path, text, mode: 0o600) && chmod(path, 0o600) == 0,
                     "could not write \(path)", sourceLocation: sourceLocation)
    }

    var policyPath: String { "\(configFolder)/policy.json" }

    /// `$XDG_STATE_HOME/vaultctl/audit.log`.
    var auditLogPath: String { "\(stateFolder)/audit.log" }

    /// The raw lines of the audit log file (none when it does not exist).
    var auditFileLines: [String] {
        (FileText.read(auditLogPath) ?? "").split(separator: "\n").map(String.init)
    }

    /// `vaultctl status NAME --json` as a dictionary (for `allowSupply` and `lastSupply`).
    func statusObject(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let r = vaultctlWithoutPAM(["status", name, "--json"], sourceLocation: sourceLocation)
        try #require(r.status == 0, "status \(name) failed: \(r)", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any],
                            "not a JSON object: \(r.stdoutText)", sourceLocation: sourceLocation)
    }

    private func makeSubfolder(_ prefix: String) throws -> String {
        var template = Array("\(root)/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SetupError(description: "mkdtemp in \(root) failed: errno \(errno)") }
        return String(cString: made)
    }

    func writeScript(_ path: String, _ body: String) throws {
        guard FileText.write(path, "#!/bin/sh\n" + body, mode: 0o700), chmod(path, 0o700) == 0 else {
            throw SetupError(description: "could not write \(path)")
        }
    }
}

/// Parses lines of JSON objects (`log --json`, the audit file).
enum JSONLines {
    static func parse(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                         "not a JSON object: \(line)", sourceLocation: sourceLocation)
        }
    }
}
