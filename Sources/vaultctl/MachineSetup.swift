#if canImport(Glibc)
import Glibc
#endif
import Slots
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
        return "An administrator gives the gate its mode back with '\(gateModeCommand(path: path, package: packageOwns(path)))'; the gate cannot be turned off while vaults depend on it, and without that mode nobody's vaultctl can use the device slot."
    }

    /// The command that gives the gate at `path` its owner, group and mode: the package's statoverride for
    /// the package's gate (a plain chmod would last until the next upgrade), else what `make install` does.
    static func gateModeCommand(path: String, package: Bool) -> String {
        package
            ? "sudo dpkg-statoverride --update --add root \(gateGroup) 2755 \(path)"
            : "sudo chown root:\(gateGroup) \(path) && sudo chmod 2755 \(path)"
    }

    /// The gate's group (`GateStore.group`, in the gate's own module).
    static let gateGroup = "vaultctl"

    /// Whether the Debian package installed `path`: this vaultctl is the package's build (debian/rules compiles
    /// it with `-D VAULTCTL_DEBIAN_PACKAGE`) and `path` is where the package puts the gate. Not dpkg's list of
    /// the package's files: dpkg's database is its own (lintian: uses-dpkg-database-directly).
    static func packageOwns(_ path: String) -> Bool {
        #if VAULTCTL_DEBIAN_PACKAGE
        return path == "/usr/libexec/vaultctl/vaultctl-gate"
        #else
        return false
        #endif
    }
}
