import Foundation
import Testing
import TestSupport

/// vaultctl is not dumpable before its `main` runs (Sources/CStartHardening): a same-user program that opened
/// /proc/PID/mem or attached while it was dumpable would keep that access afterwards. The installed gate is
/// started then too, once vaultctl is not dumpable, before main. Root: strace reads the paths a process that is
/// not dumpable gives execve only with CAP_SYS_PTRACE (as another user it shows their addresses).
@Suite(.tags(.needsRoot)) struct StartHardeningTests {
    @Test func vaultctlIsNotDumpableBeforeMainRuns() throws {
        let trace = NSTemporaryDirectory() + "start-hardening-\(getpid()).trace"
        defer { unlink(trace) }
        let r = ProcessRunner.run(Paths.tool("strace"), ["-o", trace, "-e", "trace=prctl,fcntl", Paths.vaultctl, "--version"],
                                  environment: ["PATH": Paths.systemPATH])
        #expect(r.status == 0, "\(r)")
        let lines = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n")
        // The start-up's first check of descriptors 0-2 (fcntl F_GETFD, early_gate.c's constructor and again
        // main's first statement) comes after the prctl of start.c's constructor.
        let dumpable = lines.firstIndex { $0.contains("PR_SET_DUMPABLE") && $0.contains("SUID_DUMP_DISABLE") }
        let mainBegins = lines.firstIndex { $0.hasPrefix("fcntl(0, F_GETFD)") }
        #expect(dumpable != nil && mainBegins != nil && dumpable! < mainBegins!, "\(lines)")
    }

    @Test func theInstalledGateStartsBeforeMainOnceVaultctlIsNotDumpable() throws {
        // An installed layout: PREFIX/bin/vaultctl and PREFIX/libexec/vaultctl/vaultctl-gate (here not
        // set-group-ID, so it refuses to run: only the order of the start matters).
        let prefix = NSTemporaryDirectory() + "early-gate-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        try FileManager.default.createDirectory(atPath: "\(prefix)/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(prefix)/libexec/vaultctl", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.vaultctl, toPath: "\(prefix)/bin/vaultctl")
        try FileManager.default.copyItem(atPath: Paths.folder(of: Paths.vaultctl) + "/vaultctl-gate", toPath: "\(prefix)/libexec/vaultctl/vaultctl-gate")
        let trace = "\(prefix)/trace"
        let state = "\(prefix)/state"
        let r = ProcessRunner.run(Paths.tool("strace"), ["-f", "-o", trace, "-e", "trace=execve,prctl", "\(prefix)/bin/vaultctl", "status", "mail"],
                                  environment: ["PATH": Paths.systemPATH, "HOME": prefix, "XDG_STATE_HOME": state, "XDG_CONFIG_HOME": state])
        #expect(r.status != 0, "\(r)")  // the gate, not set-group-ID, refused: status says so
        let lines = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n")
        let pid = lines.first.map { String($0.prefix { $0 != " " }) } ?? "?"
        // vaultctl's own PR_SET_DUMPABLE calls: start.c's constructor, then Hardening.apply() in main (its
        // second statement after the descriptors).
        let hardening = lines.indices.filter { lines[$0].hasPrefix(pid + " ") && lines[$0].contains("PR_SET_DUMPABLE") }
        let gateExecs = lines.indices.filter { lines[$0].contains("execve(") && lines[$0].contains("/libexec/vaultctl/vaultctl-gate\"") }
        let gateExec = gateExecs.first
        // One gate: the command adopted the one the constructor started.
        #expect(hardening.count == 2 && gateExecs.count == 1, "\(lines)")
        if hardening.count == 2, let gateExec {
            #expect(hardening[0] < gateExec && gateExec < hardening[1], "\(lines)")
        }

        // With descriptors 0-2 closed, the constructor opens /dev/null on them before the gate's pipes: no pipe
        // end becomes standard input or output.
        let closed = "\(prefix)/closed.trace"
        _ = ProcessRunner.run(Paths.tool("sh"), ["-c", "exec \"$0\" -f -o \"$1\" -e trace=pipe2,execve \"$2\" status mail <&- >&- 2>&-",
                                                  Paths.tool("strace"), closed, "\(prefix)/bin/vaultctl"],
                              environment: ["PATH": Paths.systemPATH, "HOME": prefix, "XDG_STATE_HOME": state, "XDG_CONFIG_HOME": state])
        let closedLines = (try String(contentsOfFile: closed, encoding: .utf8)).split(separator: "\n")
        let pipes = closedLines.filter { $0.contains("pipe2([") }
        #expect(pipes.count >= 2 && closedLines.contains { $0.contains("vaultctl-gate\"") && $0.contains("execve(") }, "\(closedLines)")
        for line in pipes {
            let fds = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            #expect(fds.count == 2 && fds.allSatisfy { $0 >= 3 }, "\(line)")
        }
    }
}
