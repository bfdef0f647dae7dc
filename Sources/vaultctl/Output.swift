#if canImport(Glibc)
import Glibc
#endif
import Slots

/// Writes to the standard streams with `write(2)`, so secret bytes never pass through `String` or `print`.
enum Output {
    static func out(_ text: String) { write(1, text) }
    static func err(_ text: String) { write(2, text) }

    /// One line on stderr, `vaultctl: TEXT`: anything in the text that is not shown as itself (a newline,
    /// an escape sequence) is escaped, so a message is one line whatever input it quotes.
    static func message(_ text: String) { write(2, "vaultctl: \(Quote.oneLine(text))\n") }

    static func write(_ fd: Int32, _ text: String) {
        var t = text
        _ = t.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// The exact secret bytes on stdout, with a newline only when stdout is a terminal (as secret-tool does).
    static func secret(_ secret: SecretBytes) -> Bool {
        let ok = secret.withUnsafeBytes { writeAll(1, $0) }
        if ok && isatty(1) == 1 {
            var newline: UInt8 = 0x0A
            return withUnsafeBytes(of: &newline) { writeAll(1, $0) }
        }
        return ok
    }

    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += n
        }
        return true
    }
}
