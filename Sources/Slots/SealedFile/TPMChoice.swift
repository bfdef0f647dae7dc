#if canImport(Glibc)
import Glibc
#endif

/// Which TPM vaultctl talks to: `VAULTCTL_TPM2_TCTI` when set (a tpm2-tss TCTI loader string such as
/// `swtpm:path=/run/swtpm/sock` or `device:/dev/tpmrm0`), else the kernel's resource manager `/dev/tpmrm0`
/// when this user may open it, else none (the device key is then bound to the machine id).
/// `VAULTCTL_TPM2_TCTI=none` says "no TPM" even where `/dev/tpmrm0` opens.
public struct TPMChoice: Sendable, Equatable {
    /// The TCTI configuration string handed to `Tss2_TctiLdr_Initialize`. A TPM named here that does not
    /// answer is an error, never a quiet fall back to the machine id.
    public let tcti: String

    public init(tcti: String) {
        self.tcti = tcti
    }

    public static let variable = "VAULTCTL_TPM2_TCTI"
    /// Why there is no TPM, in words for messages: none named, none on this machine, or one this user may
    /// not open (on Debian `/dev/tpmrm0` is `root:tss 0660`), with what would let them.
    public static var noneReason: String {
        if let value = getenv(variable).map({ String(cString: $0) }), value == "none" {
            return "\(variable) is 'none', which says not to use a TPM"
        }
        var st = stat()
        guard stat(kernelDevice, &st) == 0 else {
            return "this machine shows no TPM (\(kernelDevice) is not there, and \(variable) names none)"
        }
        let group = getgrgid(st.st_gid).flatMap { $0.pointee.gr_name.map { String(cString: $0) } } ?? "gid \(st.st_gid)"
        let mode = String(st.st_mode & 0o777, radix: 8)
        let what = "this machine has a TPM, but you may not open \(kernelDevice) (owner uid \(st.st_uid), group '\(group)', mode \(mode))"
        // Only a group that may read and write it, and is not root's, is worth naming.
        guard st.st_mode & 0o060 == 0o060, st.st_gid != 0 else {
            return "\(what); only root may, so joining a group would not help: the machine's owner can give users a TPM group (Debian's tpm-udev makes it root:tss 0660), or install vaultctl's gate, which uses the TPM root names for it"
        }
        return "\(what); a member of the group '\(group)' may ('sudo usermod -aG \(group) YOU', then log in again), and that lets every program you run use the TPM, so it is a choice for the machine's owner"
    }
    public static let kernelDevice = "/dev/tpmrm0"

    /// The TPM this environment names, or nil. Looks at no TPM (only whether the device node opens for
    /// this user: on Debian `/dev/tpmrm0` is for root and the `tss` group).
    public static func fromEnvironment() -> TPMChoice? {
        if let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty {
            return value == "none" ? nil : TPMChoice(tcti: value)
        }
        guard access(kernelDevice, R_OK | W_OK) == 0 else { return nil }
        return TPMChoice(tcti: "device:\(kernelDevice)")
    }
}

/// What binds the device key to this machine, as `status` and `device-key status` name it.
public enum DeviceKeyBinding: String, Sendable {
    /// Sealed by the TPM: it cannot be unsealed on any other machine, even from a copied state folder.
    case tpm2
    /// Mixed with `/etc/machine-id`: a restored backup does not open elsewhere, a deliberate copy with the
    /// same id does.
    case machineID = "machine-id"
}
