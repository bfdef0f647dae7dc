import Foundation
import Testing

/// vaultctl is not dumpable before its `main` runs (Sources/CStartHardening): a same-user program that opened
/// /proc/PID/mem or attached while it was dumpable would keep that access afterwards.
@Suite struct StartHardeningTests {
    @Test func vaultctlIsNotDumpableBeforeMainRuns() throws {
        let trace = NSTemporaryDirectory() + "start-hardening-\(getpid()).trace"
        defer { unlink(trace) }
        let r = ProcessRunner.run(Paths.tool("strace"), ["-o", trace, "-e", "trace=prctl,fcntl", Paths.vaultctl, "--version"],
                                  environment: ["PATH": Paths.systemPATH])
        #expect(r.status == 0, "\(r)")
        let lines = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n")
        // main's first statement checks descriptors 0-2 with fcntl(F_GETFD); the constructor's prctl comes first.
        let dumpable = lines.firstIndex { $0.contains("PR_SET_DUMPABLE") && $0.contains("SUID_DUMP_DISABLE") }
        let mainBegins = lines.firstIndex { $0.hasPrefix("fcntl(0, F_GETFD)") }
        #expect(dumpable != nil && mainBegins != nil && dumpable! < mainBegins!, "\(lines)")
    }
}
