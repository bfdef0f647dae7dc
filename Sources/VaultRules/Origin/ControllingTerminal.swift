#if canImport(Glibc)
import Glibc
#endif

/// Names this process's controlling terminal as utmp does ("pts/3", "tty1").
///
/// The terminal is the *controlling* one the kernel reports (`tty_nr` in `/proc/self/stat`), not merely
/// whatever fd 0 is: a remote user could run `vaultctl … < /dev/pts/0` with another session's terminal
/// (their own user owns it) to borrow that session's utmp record. Its name comes from `ttyname` of
/// fd 0, 1 or 2 when one of them is that terminal, otherwise from the device number.
enum ControllingTerminal {
    struct Device: Equatable {
        var major: UInt32
        var minor: UInt32
    }

    /// The utmp `ut_line` of the terminal with kernel device number `ttyNr` (0: no controlling terminal).
    static func line(ttyNr: Int64) -> String? {
        guard ttyNr > 0 else { return nil }
        let device = kernelDevice(ttyNr)
        for fd in Int32(0)...2 where isatty(fd) == 1 {
            var st = stat()
            guard fstat(fd, &st) == 0, glibcDevice(UInt64(st.st_rdev)) == device, let name = name(ofFD: fd) else { continue }
            return stripDev(name)
        }
        for candidate in candidateLines(device) {
            var st = stat()
            if stat("/dev/\(candidate)", &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR,
               glibcDevice(UInt64(st.st_rdev)) == device {
                return candidate
            }
        }
        return nil
    }

    /// The first of fds 0, 1, 2 that is a terminal, by `ttyname`: only for when `/proc` cannot be read.
    static func lineOfFirstTerminalFD() -> String? {
        for fd in Int32(0)...2 where isatty(fd) == 1 {
            if let name = name(ofFD: fd) { return stripDev(name) }
        }
        return nil
    }

    /// `tty_nr` of `/proc/<pid>/stat`: minor bits 0–7 and 20–31, major bits 8–19.
    static func kernelDevice(_ n: Int64) -> Device {
        let v = UInt64(bitPattern: n)
        return Device(major: UInt32((v >> 8) & 0xfff), minor: UInt32((v & 0xff) | ((v >> 12) & 0xfff00)))
    }

    /// glibc's `dev_t` (`gnu_dev_major` / `gnu_dev_minor`).
    static func glibcDevice(_ dev: UInt64) -> Device {
        Device(major: UInt32(truncatingIfNeeded: ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))),
               minor: UInt32(truncatingIfNeeded: (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))))
    }

    /// Names a terminal device may have under /dev: Unix98 ptys (majors 136–143), virtual consoles and
    /// serial ports (major 4).
    static func candidateLines(_ d: Device) -> [String] {
        switch d.major {
        case 136...143:
            let flat = (d.major - 136) * 256 + d.minor
            return flat == d.minor ? ["pts/\(d.minor)"] : ["pts/\(d.minor)", "pts/\(flat)"]
        case 4 where d.minor < 64: return ["tty\(d.minor)"]
        case 4: return ["ttyS\(d.minor - 64)"]
        default: return []
        }
    }

    static func stripDev(_ path: String) -> String {
        path.hasPrefix("/dev/") ? String(path.dropFirst(5)) : path
    }

    private static func name(ofFD fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard ttyname_r(fd, &buffer, buffer.count) == 0 else { return nil }
        return buffer.withUnsafeBytes { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }
}
