#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault

/// What this machine lacks for vaultctl, and what an administrator does about it: no machine id (a container
/// made without one), or a gate that lost its set-group-ID mode.
enum MachineSetup {
    /// This machine's identity, which the device slot is bound to; 78 with how to make one when there is none.
    static func identity() throws(CommandFailure) -> MachineIdentity {
        do { return try MachineIdentity.current() } catch { throw noMachineID }
    }

    /// Whether the machine has an id vaultctl can bind to (`/etc/machine-id`, else `/var/lib/dbus/machine-id`).
    static var hasMachineID: Bool { (try? MachineIdentity.current()) != nil }

    /// No `/etc/machine-id` (nor `/var/lib/dbus/machine-id`), or only empty ones: 78, and how to make one.
    static let noMachineID = CommandFailure(code: .config, message: "This machine has no machine id (/etc/machine-id is missing or empty, as in a container made without one), and vaultctl binds device slots to it. Make one as root with 'systemd-machine-id-setup' (or 'dbus-uuidgen --ensure=/etc/machine-id'), then try again.")

    /// How an administrator gives the gate at `path` its mode back, when its file is not set-group-ID
    /// `vaultctl` (what an administrator who removed the package's override gets); nil when it is (the gate
    /// refused for another reason, with its own words) or the file cannot be looked at.
    static func gateModeRemedy(path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0, let group = getgrnam(gateGroup) else { return nil }
        guard st.st_mode & S_ISGID == 0 || st.st_gid != group.pointee.gr_gid else { return nil }
        return "An administrator gives the gate its mode back with '\(Installation.current.gateModeCommand(path: path, group: gateGroup))'; the gate cannot be turned off while vaults depend on it, and without that mode nobody's vaultctl can use the device slot."
    }

    /// The gate's group (`GateStore.group`, in the gate's own module).
    static let gateGroup = "vaultctl"
}
