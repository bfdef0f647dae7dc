#if canImport(Glibc)
import Glibc
#endif
import JSON
import Slots
import VaultRules

/// What root chooses for the gate in `/etc/vaultctl/gate.conf`, a JSON document:
/// `{"version": 1, "tpm": "auto"}`. `tpm` is `auto` (the kernel's resource manager `/dev/tpmrm0` when the
/// gate may open it, which the udev rule of the package vaultctl-tpm or of `make install TPM_RULE=yes`
/// grants group `vaultctl`; else none), `none`, or a tpm2-tss TCTI string (`device:/dev/tpmrm0`,
/// `swtpm:path=/run/swtpm/sock`). Never the
/// caller's `VAULTCTL_TPM2_TCTI`: a user could point a seal at a software TPM of their own and learn the
/// seed. No file means `auto`. A file that root does not own, or that others may write, or an unknown key
/// or version, is refused (78).
public struct GateConfiguration: Sendable, Equatable {
    public static let path = "\(RootPolicy.folder)/gate.conf"
    /// The TPM the gate seals new device keys with and unseals with; nil: none.
    public var tpm: TPMChoice?

    public init(tpm: TPMChoice?) { self.tpm = tpm }

    public static func load() throws(VaultError) -> GateConfiguration {
        var st = stat()
        guard lstat(path, &st) == 0 else { return GateConfiguration(tpm: auto()) }
        guard st.st_mode & S_IFMT == S_IFREG, st.st_uid == 0, st.st_mode & 0o022 == 0 else {
            throw .configuration(path: path, detail: "it must be a regular file owned by root that only root may write (mode \(String(st.st_mode & 0o7777, radix: 8)), owner \(st.st_uid))")
        }
        let bytes = try PolicyFileReader.read(path, maximumCount: 4096)
        return try bytes.withTypedUnsafeBytes { (raw) throws(VaultError) -> GateConfiguration in try parse(raw) }
    }

    /// Reads a document of version 1 (the rules above).
    public static func parse(_ raw: UnsafeRawBufferPointer) throws(VaultError) -> GateConfiguration {
        guard raw.count <= 4096 else { throw .configuration(path: path, detail: "it is larger than 4 KiB") }
        let value: JSONValue
        do { value = try JSONParser.parse(raw, maximumDepth: 2) } catch {
            throw .configuration(path: path, detail: "it is not valid JSON (\(error))")
        }
        guard let members = value.objectValue else { throw .configuration(path: path, detail: "it must be a JSON object") }
        for key in members.keys where key != "version" && key != "tpm" {
            throw .configuration(path: path, detail: "it has an unknown key \(Quote.text(key)); it may hold only \"version\" and \"tpm\"")
        }
        guard members["version"]?.intValue == 1 else {
            throw .configuration(path: path, detail: "its \"version\" must be the number 1")
        }
        guard let tpm = members["tpm"] else { return GateConfiguration(tpm: auto()) }
        guard let text = tpm.stringValue, !text.isEmpty, text.utf8.count <= 256,
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw .configuration(path: path, detail: "its \"tpm\" must be \"auto\", \"none\" or a TCTI string such as \"device:/dev/tpmrm0\"")
        }
        switch text {
        case "auto": return GateConfiguration(tpm: auto())
        case "none": return GateConfiguration(tpm: nil)
        default: return GateConfiguration(tpm: TPMChoice(tcti: text))
        }
    }

    /// The kernel's resource manager when this process may open it.
    static func auto() -> TPMChoice? {
        access(TPMChoice.kernelDevice, R_OK | W_OK) == 0 ? TPMChoice(tcti: "device:\(TPMChoice.kernelDevice)") : nil
    }
}
