#if canImport(Glibc)
import Glibc
#endif

/// Which session bus to connect to, in sd-bus's address syntax: `DBUS_SESSION_BUS_ADDRESS` when it is set
/// and not empty, else `unix:path=$XDG_RUNTIME_DIR/bus` when that socket exists (as sd-bus's
/// `sd_bus_open_user` and GDBus choose), else none.
struct SessionBusAddress: Equatable {
    /// The address as sd-bus takes it.
    let text: String
    /// Whether it came from `DBUS_SESSION_BUS_ADDRESS`.
    let fromEnvironment: Bool
    /// What to show in a message: the socket's path, or the variable's name.
    let shown: String

    static func current(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> SessionBusAddress? {
        if let text = environment("DBUS_SESSION_BUS_ADDRESS"), !text.isEmpty {
            return SessionBusAddress(text: text, fromEnvironment: true, shown: "the bus in DBUS_SESSION_BUS_ADDRESS")
        }
        guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
        let path = "\(runtime)/bus"
        var st = stat()
        guard stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return SessionBusAddress(text: "unix:path=" + escaped(path), fromEnvironment: false, shown: path)
    }

    /// A value in D-Bus address syntax: bytes other than `[-0-9A-Za-z_/.\*]` as `%XX` (the D-Bus
    /// specification's "Server Addresses"; sd-bus's own escaping is not public API).
    static func escaped(_ value: String) -> String {
        let plain = Set("-_/.\\*0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in value.utf8 {
            if plain.contains(b) { out.append(b) } else { out += [UInt8(ascii: "%"), digits[Int(b >> 4)], digits[Int(b & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
