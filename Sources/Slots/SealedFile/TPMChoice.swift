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
    /// Why there is no TPM, in words for messages.
    public static let noneReason = "no TPM is configured here (\(variable) is unset or 'none', and \(kernelDevice) cannot be opened)"
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
