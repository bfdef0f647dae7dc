#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import SecretService
@testable import Slots

/// Which session bus vaultctl connects to: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when that
/// socket exists, else none.
@Suite("SessionBusAddress")
struct SessionBusAddressTests {
    @Test func theVariableWinsWhenSet() {
        let a = SessionBusAddress.current { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/run/user/1000/bus" : "/run/user/1000" }
        #expect(a?.text == "unix:path=/run/user/1000/bus" && a?.fromEnvironment == true)
    }

    @Test func anEmptyVariableIsUnsetAndNoRuntimeFolderIsNoBus() {
        #expect(SessionBusAddress.current { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "" : nil } == nil)
    }

    @Test func theRuntimeFoldersSocketIsUsedOnlyWhenItIsASocket() throws {
        try withTemporaryFolder { folder in
            #expect(SessionBusAddress.current { $0 == "XDG_RUNTIME_DIR" ? folder : nil } == nil, "no socket there")
            let path = "\(folder)/bus"
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            let bound = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(bound == 0)
            let a = SessionBusAddress.current { $0 == "XDG_RUNTIME_DIR" ? folder : nil }
            #expect(a?.text == "unix:path=" + SessionBusAddress.escaped(path) && a?.fromEnvironment == false)
            #expect(SessionBusAddress.current { $0 == "XDG_RUNTIME_DIR" ? "relative/dir" : nil } == nil)
        }
    }

    @Test func pathsAreEscapedAsTheAddressSyntaxWants() {
        #expect(SessionBusAddress.escaped("/run/user/1000/bus") == "/run/user/1000/bus")
        #expect(SessionBusAddress.escaped("/tmp/a b,c=d;é") == "/tmp/a%20b%2cc%3dd%3b%c3%a9")
    }
}
