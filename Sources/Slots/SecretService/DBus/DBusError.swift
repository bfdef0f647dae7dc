/// What can go wrong talking to a bus. The Secret Service slot turns these into `SlotError`s with words.
enum DBusError: Error, Equatable, Sendable {
    /// No session bus address to connect to.
    case noAddress
    /// No address could be connected to (the last reason).
    case cannotConnect(String)
    /// The bus refused our credentials.
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
