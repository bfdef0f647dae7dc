import CBusConnector
#if canImport(Glibc)
import Glibc
#endif
import Slots

/// A session-bus socket connected by a copy of vaultctl that the provider can see (Sources/CBusConnector
/// has the why and the other end): for a provider that names its clients by the executable
/// of the connection's process, as KeePassXC does (and warns "invalid executable path" about vaultctl, which
/// is not dumpable). vaultctl itself stays not dumpable; the connector becomes dumpable only once it holds
/// nothing but the channel, and ends when vaultctl closes it.
struct BusConnector {
    /// The connected socket (vaultctl's from now on), the channel the connector waits on, its pid.
    let socket: Int32
    let channel: Int32
    let pid: pid_t

    /// The process name (`/proc/PID/comm`) of `pid`, or nil.
    static func processName(of pid: UInt32) -> String? {
        guard let bytes = PlainFile.read("/proc/\(pid)/comm", maximumCount: 64), !bytes.isEmpty else { return nil }
        return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    /// Starts the connector (this very program: /proc/self/exe, so the same binary even if its file was
    /// replaced meanwhile) and takes the socket it connected to the address `existing` reached, within
    /// `deadline` and at most a second (so that vaultctl's own connection still has time); nil when any step
    /// fails (the caller keeps its own connection: the provider then names vaultctl's process as before).
    static func connect(like existing: Int32, deadline: Deadline) -> BusConnector? {
        var address = [UInt8](repeating: 0, count: Int(VAULTCTL_BUS_ADDRESS_BYTES))
        var length: UInt32 = 0
        guard vaultctl_bus_peer_address(existing, &address, &length) == 0 else { return nil }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { return nil }
        // Nothing of vaultctl's but the channel: no environment, /dev/null for output and errors.
        let spawned = ChildSpawn.start(["/proc/self/exe", VAULTCTL_BUS_CONNECTOR_ARGUMENT], searchingPATH: false, environment: [],
                                       programName: "vaultctl") { actions in
            posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        close(pair[1])
        guard case .success(let pid) = spawned else {
            close(pair[0])
            return nil
        }
        let wait = min(max(deadline.remainingMilliseconds / 4, 1), 1000)
        let socket: Int32 = vaultctl_bus_connector_send(pair[0], &address, length) == 0
            ? vaultctl_bus_connector_receive(pair[0], wait, &address, length, existing)
            : -1
        guard socket >= 0 else {
            close(pair[0])  // the connector ends at once: its channel is closed
            return nil
        }
        return BusConnector(socket: socket, channel: pair[0], pid: pid)
    }

    /// Lets the connector end: the provider has read what it needed (it ends when its channel closes).
    func release() {
        close(channel)
    }

    /// Collects the connector once it has ended, without waiting (a process that ended is a zombie until
    /// then; one still running ends within its own bound, and vaultctl's end hands it to init).
    func reap() {
        var status: Int32 = 0
        _ = waitpid(pid, &status, WNOHANG)
    }
}
