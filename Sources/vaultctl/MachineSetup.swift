#if canImport(Glibc)
import Glibc
#endif
import Slots
import Vault

/// What this machine lacks for vaultctl, and what an administrator does about it: no machine id (a container
/// made without one).
enum MachineSetup {
    /// This machine's identity, which the device slot is bound to; 78 with how to make one when there is none.
    static func identity() throws(CommandFailure) -> MachineIdentity {
        do { return try MachineIdentity.current() } catch { throw noMachineID }
    }

    /// Whether the machine has an id vaultctl can bind to (`/etc/machine-id`, else `/var/lib/dbus/machine-id`).
    static var hasMachineID: Bool { (try? MachineIdentity.current()) != nil }

    /// No `/etc/machine-id` (nor `/var/lib/dbus/machine-id`), or only empty ones: 78, and how to make one.
    static let noMachineID = CommandFailure(code: .config, message: "This machine has no machine id (/etc/machine-id is missing or empty, as in a container made without one), and vaultctl binds device slots to it. Make one as root with 'systemd-machine-id-setup' (or 'dbus-uuidgen --ensure=/etc/machine-id'), then try again.")

}
