/// One method call to send: the object, its interface, the method and the arguments. The destination is
/// the one given to `BusConnection.callAll`, unless the call names its own (a call to the bus driver sent
/// in the same trip as calls to the provider).
struct BusCall {
    let path: String
    let interface: String
    let member: String
    let arguments: [DBusValue]
    let destination: String?

    init(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [], to destination: String? = nil) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.destination = destination
    }
}
