// Duration is in the concurrency module, which the release build of this target (`make release`) lacks.
#if canImport(Testing)
/// How a child process ended and what it said.
public struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or 128 + the signal number when it was killed.
    public let status: Int32
    /// The exact bytes written to standard output (a pipe, so not a terminal).
    public let stdout: [UInt8]
    /// Standard error as text (lossy for invalid UTF-8).
    public let stderr: String
    public let elapsed: Duration
    /// Whether the runner killed it for taking too long.
    public let timedOut: Bool

    public init(status: Int32, stdout: [UInt8], stderr: String, elapsed: Duration, timedOut: Bool) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed = elapsed
        self.timedOut = timedOut
    }

    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// The same result without pam_wrapper's own diagnostics in stderr (lines starting `PWRAP_`): the
    /// preloaded library prints them when parallel processes race on its `/tmp/pam.X` folders. They are
    /// not vaultctl's words.
    public func droppingPAMWrapperNoise() -> ProcessResult {
        guard stderr.contains("PWRAP_") else { return self }
        return ProcessResult(status: status, stdout: stdout, stderr: PamWrapperDirs.droppingNoise(stderr),
                             elapsed: elapsed, timedOut: timedOut)
    }

    public var description: String {
        "status \(status)\(timedOut ? " (killed after timeout)" : ""), \(stdout.count) bytes on stdout, stderr: \(stderr.debugDescription), \(elapsed)"
    }
}
#endif
