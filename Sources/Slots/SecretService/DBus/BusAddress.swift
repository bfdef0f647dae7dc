#if canImport(Glibc)
import Glibc
#endif

/// Where the session bus listens, from `DBUS_SESSION_BUS_ADDRESS` (the D-Bus specification's address
/// syntax), or `$XDG_RUNTIME_DIR/bus` when the variable is not set (as sd-bus and GDBus do).
enum BusAddress: Equatable, Sendable {
    case path(String)
    case abstract(String)

    /// The addresses to try, in order. Transports other than `unix:path=` and `unix:abstract=` are skipped.
    static func session(environment: (String) -> String? = BusAddress.environment) -> [BusAddress] {
        if let text = environment("DBUS_SESSION_BUS_ADDRESS"), !text.isEmpty {
            return parse(text)
        }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var st = stat()
            let path = "\(runtime)/bus"
            if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK { return [.path(path)] }
        }
        return []
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Parses `unix:path=/run/user/1000/bus;unix:abstract=/tmp/dbus-x,guid=…`.
    static func parse(_ text: String) -> [BusAddress] {
        var out: [BusAddress] = []
        for entry in text.split(separator: ";") {
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { continue }
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                guard let value = unescape(pair[pair.index(after: eq)...]) else { continue }
                keys[String(pair[..<eq])] = value
            }
            if let p = keys["path"], !p.isEmpty { out.append(.path(p)) } else if let a = keys["abstract"], !a.isEmpty { out.append(.abstract(a)) }
        }
        return out
    }

    /// Undoes the `%XX` escapes of address values.
    private static func unescape(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(c)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    var description: String {
        switch self {
        case .path(let p): return p
        case .abstract(let a): return "@\(a)"
        }
    }
}
