/// What a child process is given on standard input.
public enum Stdin: Sendable {
    /// `/dev/null`: reads see end of file at once.
    case null
    /// These exact bytes through a pipe, then end of file.
    case bytes([UInt8])
    /// A pseudo-terminal nobody types on (not the child's controlling terminal: `isatty(0)` is true).
    case terminal
    /// No descriptor 0 at all (`<&-`).
    case closed

    public static func text(_ s: String) -> Stdin { .bytes(Array(s.utf8)) }
}
