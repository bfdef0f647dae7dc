/// One method call to send: the object, its interface, the method and the arguments (the destination is
/// the connection's peer, given to `BusConnection.callAll`).
struct BusCall {
    let path: String
    let interface: String
    let member: String
    let arguments: [DBusValue]

    init(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}
