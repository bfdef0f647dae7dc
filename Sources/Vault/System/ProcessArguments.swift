#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules

/// The command line, from `CommandLine.arguments`, or from `/proc/self/cmdline` when the runtime has none.
///
/// A binary linked with the Swift runtime statically (`--static-swift-stdlib`, what `make release` builds)
/// sees an empty `CommandLine.arguments` when pam_wrapper (the tests' and the benchmark's PAM stand-in) is
/// preloaded with a service folder. Arguments are never secret, so reading them back from the kernel is safe.
public enum ProcessArguments {
    /// Each word keeps its bytes: one that is not valid UTF-8 is decoded by `ArgumentBytes`, never with U+FFFD.
    public static func current() -> [String] {
        if CommandLine.argc > 0 {
            return (0..<Int(CommandLine.argc)).map { i in
                guard let word = CommandLine.unsafeArgv[i] else { return "" }
                if let ascii = asciiWord(word) { return ascii }
                return ArgumentBytes.decode(UnsafeBufferPointer(start: UnsafeRawPointer(word).assumingMemoryBound(to: UInt8.self),
                                                                count: strlen(word)))
            }
        }
        let fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            ArgumentBytes.decode($0)
        }
    }

    /// A word of ASCII bytes only (almost every word) as a `String`, which is what `ArgumentBytes.decode`
    /// makes of it, without the generic copy that decode makes first (its first call in a process was
    /// ~0.1 ms of a command's start, in runtime type lookups); nil for any other word.
    static func asciiWord(_ word: UnsafePointer<CChar>) -> String? {
        var at = UnsafeRawPointer(word).assumingMemoryBound(to: UInt8.self)
        while at.pointee != 0 {
            if at.pointee >= 0x80 { return nil }
            at += 1
        }
        return String(cString: word)
    }
}
