import CBusConnector
import Foundation
import Testing

/// vaultctl's side of the connector's hand-over (Sources/CBusConnector): it takes only a unix stream
/// socket whose peer is at the address it sent and is the very process behind its own connection, within
/// its bound; anything else is closed and refused, and nothing sent is a timeout, not a wait.
@Suite struct BusConnectorHandOverTests {
    /// A listener at a path of its own in a temporary folder, and vaultctl's "own connection" to it.
    final class Bus {
        let folder: String
        let path: String
        let listener: Int32
        let own: Int32
        var address = [UInt8](repeating: 0, count: Int(VAULTCTL_BUS_ADDRESS_BYTES))
        var length: UInt32 = 0

        init() throws {
            folder = NSTemporaryDirectory() + "connector-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            path = folder + "/bus"
            listener = Bus.listen(at: path)
            own = Bus.connect(to: path)
            #expect(listener >= 0 && own >= 0)
            #expect(vaultctl_bus_peer_address(own, &address, &length) == 0)
        }

        static func socketAddress(_ path: String) -> (sockaddr_un, socklen_t) {
            var a = sockaddr_un()
            a.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &a.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            return (a, socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1))
        }

        static func listen(at path: String) -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var (a, n) = socketAddress(path)
            let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, n) } }
            return bound == 0 && Glibc.listen(fd, 8) == 0 ? fd : -1
        }

        static func connect(to path: String) -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var (a, n) = socketAddress(path)
            let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, n) } }
            return rc == 0 ? fd : -1
        }

        /// A channel pair as vaultctl and its connector hold it.
        func channel() -> (vaultctl: Int32, connector: Int32) {
            var pair: [Int32] = [-1, -1]
            _ = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair)
            return (pair[0], pair[1])
        }

        func receive(on channel: Int32, within milliseconds: Int32 = 200) -> Int32 {
            vaultctl_bus_connector_receive(channel, milliseconds, &address, length, own)
        }

        deinit {
            close(listener)
            close(own)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test func aSocketToTheSameBusProcessIsTaken() throws {
        let bus = try Bus()
        let c = bus.channel()
        let socket = Bus.connect(to: bus.path)
        #expect(vaultctl_bus_connector_hand_over(c.connector, socket) == 0)
        #expect(vaultctl_bus_connector_say_readable(c.connector) == 0)
        let taken = bus.receive(on: c.vaultctl)
        #expect(taken >= 0)
        close(taken); close(socket); close(c.vaultctl); close(c.connector)
    }

    /// The right socket, but the connector never says it is readable: not used (the provider could find
    /// the connector not dumpable yet).
    @Test func aSocketWithoutTheReadableWordIsNotUsed() throws {
        let bus = try Bus()
        let c = bus.channel()
        let socket = Bus.connect(to: bus.path)
        #expect(vaultctl_bus_connector_hand_over(c.connector, socket) == 0)
        #expect(bus.receive(on: c.vaultctl, within: 100) == -ETIMEDOUT)
        close(socket); close(c.vaultctl); close(c.connector)
    }

    @Test func nothingSentIsATimeoutWithinItsBound() throws {
        let bus = try Bus()
        let c = bus.channel()
        let started = Date()
        #expect(bus.receive(on: c.vaultctl, within: 100) == -ETIMEDOUT)
        #expect(Date().timeIntervalSince(started) < 5)
        close(c.vaultctl); close(c.connector)
    }

    @Test func aMessageWithoutADescriptorOrWithAPipeIsRefused() throws {
        let bus = try Bus()
        let c = bus.channel()
        var byte: UInt8 = 0
        #expect(send(c.connector, &byte, 1, 0) == 1)
        #expect(bus.receive(on: c.vaultctl) == -EPROTO)
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        #expect(vaultctl_bus_connector_hand_over(c.connector, fds[0]) == 0)
        #expect(bus.receive(on: c.vaultctl) == -EADDRNOTAVAIL)
        close(fds[0]); close(fds[1]); close(c.vaultctl); close(c.connector)
    }

    @Test func aSocketToAnotherListenerIsRefused() throws {
        let bus = try Bus()
        let c = bus.channel()
        let otherPath = bus.folder + "/other"
        let other = Bus.listen(at: otherPath)
        let socket = Bus.connect(to: otherPath)
        #expect(vaultctl_bus_connector_hand_over(c.connector, socket) == 0)
        #expect(bus.receive(on: c.vaultctl) == -EADDRNOTAVAIL)
        close(socket); close(other); close(c.vaultctl); close(c.connector)
    }

    /// The real socket renamed and another process's listener bound at its path: the same address, another
    /// process (SO_PEERCRED).
    @Test func aListenerOfAnotherProcessAtTheSamePathIsRefused() throws {
        let bus = try Bus()
        #expect(rename(bus.path, bus.path + ".real") == 0)
        // The impostor: a listener of another process at the same path, once it says it is ready.
        var out: [Int32] = [-1, -1]
        #expect(pipe(&out) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        let script = "import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); print('ready', flush=True); time.sleep(10)"
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/usr/bin/python3"), strdup("-c"), strdup(script), strdup(bus.path), nil]
        var impostor: pid_t = 0
        #expect(posix_spawn(&impostor, "/usr/bin/python3", &actions, nil, argv, environ) == 0)
        posix_spawn_file_actions_destroy(&actions)
        argv.forEach { free($0) }
        close(out[1])
        defer { kill(impostor, SIGKILL); var status: Int32 = 0; waitpid(impostor, &status, 0); close(out[0]) }
        var ready = pollfd(fd: out[0], events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1)
        var line = [UInt8](repeating: 0, count: 16)
        #expect(read(out[0], &line, line.count) > 0 && line.starts(with: Array("ready".utf8)))
        let c = bus.channel()
        let socket = Bus.connect(to: bus.path)
        #expect(socket >= 0)
        #expect(vaultctl_bus_connector_hand_over(c.connector, socket) == 0)
        #expect(bus.receive(on: c.vaultctl) == -EADDRNOTAVAIL)
        close(socket); close(c.vaultctl); close(c.connector)
    }
}
