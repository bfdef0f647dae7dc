/// What can go wrong talking to a bus. The Secret Service slot turns these into `SlotError`s with words.
enum DBusError: Error, Equatable, Sendable {
    /// libsystemd, which speaks the protocol, could not be loaded (dlerror's words).
    case libraryUnavailable(String)
    /// No session bus address to connect to.
    case noAddress
    /// The address could not be understood (`fromEnvironment`: it came from `DBUS_SESSION_BUS_ADDRESS`).
    case badAddress(Bool)
    /// No address could be connected to (the reason).
    case cannotConnect(String)
    /// The bus refused our credentials, or hung up before it accepted us.
    case authenticationRejected
    /// Nothing came back before the deadline.
    case timedOut
    /// The bus closed the connection.
    case disconnected
    /// The peer broke the protocol.
    case protocolError(String)
    /// An error reply: its D-Bus name and text.
    case remote(name: String, message: String)
}
