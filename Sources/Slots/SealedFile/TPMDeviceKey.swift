#if canImport(Glibc)
import Glibc
#endif

/// The device key sealed by the TPM: `device.tpm2` in the state folder.
///
/// The secret is a 32-byte seed kept only inside a TPM sealed data object; it determines an X25519 key
/// pair. The public key is written in the file beside the TPM's blobs, so a `store` seals a slot to it
/// without touching the TPM; only a read, after PAM, unseals the seed (one TPM unseal per read) to open
/// the slot. The file holds nothing that opens a slot without that TPM.
///
/// File format: magic `VCTLTPM` + version byte 1, the 16-byte machine tag, the 32-byte public key, then the
/// TPM blob (`TPM2B_NAME` of the storage primary, `TPM2B_PUBLIC` and `TPM2B_PRIVATE` of the sealed object,
/// marshalled by libtss2-mu in the `vaultctl-tpm` helper; see `TPM2` there). Its key id (a hash of the public key, 16 bytes) is written in
/// every slot file sealed under it.
struct TPMDeviceKey {
    static let magic: [UInt8] = Array("VCTLTPM".utf8) + [1]
    static let fileName = "device.tpm2"
    static let maximumFileCount = 4096
    private static let fixedCount = 8 + 16 + Sodium.boxKeyBytes

    let path: String
    let publicKey: [UInt8]
    let blob: [UInt8]

    /// A public 16-byte name of this key, written in the header of each slot file sealed under it.
    var keyID: [UInt8] { Self.keyID(publicKey) }

    static func keyID(_ publicKey: [UInt8]) -> [UInt8] {
        (Array("vaultctl tpm2 key id v1\0".utf8) + publicKey).withUnsafeBytes { Sodium.publicHash(count: 16, message: $0) }
    }

    /// The key in `folder` (its public parts only: no TPM is asked), nil when there is none. Refuses a file
    /// from another machine, a damaged one, or one with unsafe permissions.
    static func load(folder: String, machine: MachineIdentity) throws(SlotError) -> TPMDeviceKey? {
        let path = "\(folder)/\(fileName)"
        guard let bytes = try SecureFile.readPublic(path, maximumCount: maximumFileCount) else { return nil }
        guard bytes.count > fixedCount, Array(bytes[0..<8]) == magic else {
            throw .tampered(path: path, detail: "it is not a vaultctl TPM-sealed device key")
        }
        guard Array(bytes[8..<24]) == machine.tag else { throw .foreignMachine(path: path) }
        let blob = Array(bytes[fixedCount...])
        guard sizedParts(blob) == 3 else {
            throw .tampered(path: path, detail: "its TPM blobs are damaged")
        }
        return TPMDeviceKey(path: path, publicKey: Array(bytes[24..<fixedCount]), blob: blob)
    }

    /// How many sized parts (a 2-byte big-endian length, then that many bytes) fill `blob` exactly; nil when
    /// they do not. Only a look at the lengths, so a cut or padded file is refused before the TPM is asked;
    /// the helper parses the parts themselves with libtss2-mu.
    static func sizedParts(_ blob: [UInt8]) -> Int? {
        var (at, parts) = (0, 0)
        while at < blob.count {
            guard at + 2 <= blob.count else { return nil }
            at += 2 + (Int(blob[at]) << 8 | Int(blob[at + 1]))
            parts += 1
        }
        return at == blob.count ? parts : nil
    }

    /// Makes a new seed, seals it with `tpm`, and writes the file (exclusively: when another vaultctl wrote
    /// one first, that one is returned). The seed is unsealed once before the file is written, so a TPM
    /// that seals but cannot unseal never gets a key.
    static func create(folder: String, machine: MachineIdentity, tpm: TPMChoice) throws(SlotError) -> TPMDeviceKey {
        let path = "\(folder)/\(fileName)"
        let seed = SecretBytes.random(count: 32)
        let blob: [UInt8]
        do throws(TPMFailure) {
            blob = try TPMHelper.seal(seed, tcti: tpm.tcti)
            guard sizedParts(blob) == 3 else { throw TPMFailure.failed("the TPM helper returned no blob") }
            let back = try TPMHelper.unseal(blob, tcti: tpm.tcti)
            guard back.constantTimeEquals(seed) else {
                throw TPMFailure.failed("the TPM unsealed other bytes than it sealed")
            }
        } catch {
            switch error {
            case .lockout(let seconds): throw .tpmLockout(seconds: seconds)
            case .helperMissing(let helper): throw .tpmHelperMissing(path: helper)
            case .helperUntrusted(let helper, let why): throw .unsafePermissions(path: helper, detail: why)
            default: throw .tpmCannotSeal(detail: describe(error, tpm: tpm))
            }
        }
        let publicKey = Sodium.boxKeyPair(seed: seed).publicKey
        let file = magic + machine.tag + publicKey + blob
        let written = try file.withTypedUnsafeBytes { (raw) throws(SlotError) -> Bool in
            try SecureFile.write(path, raw, exclusive: true)
        }
        if !written, let winner = try load(folder: folder, machine: machine) { return winner }
        return TPMDeviceKey(path: path, publicKey: publicKey, blob: blob)
    }

    /// Unseals the seed with `tpm` and returns the secret key (the read's one TPM operation).
    func secretKey(tpm: TPMChoice?) throws(SlotError) -> SecretBytes {
        guard let tpm else {
            throw .tpmUnavailable(path: path, detail: TPMChoice.noneReason)
        }
        let seed: SecretBytes
        do throws(TPMFailure) { seed = try TPMHelper.unseal(blob, tcti: tpm.tcti) } catch {
            throw Self.slotError(error, path: path, tpm: tpm)
        }
        guard seed.count == 32 else { throw .tampered(path: path, detail: "the TPM unsealed a seed of the wrong size") }
        let pair = Sodium.boxKeyPair(seed: seed)
        guard pair.publicKey == publicKey else {
            throw .tampered(path: path, detail: "its public key does not match the sealed seed")
        }
        return pair.secretKey
    }

    static func slotError(_ failure: TPMFailure, path: String, tpm: TPMChoice) -> SlotError {
        switch failure {
        case .foreign: return .tpmForeign(path: path)
        case .lockout(let seconds): return .tpmLockout(seconds: seconds)
        case .damaged(let why): return .tampered(path: path, detail: why)
        case .helperMissing(let helper): return .tpmHelperMissing(path: helper)
        case .helperUntrusted(let helper, let why): return .unsafePermissions(path: helper, detail: why)
        case .unavailable, .refused, .failed: return .tpmUnavailable(path: path, detail: describe(failure, tpm: tpm))
        }
    }

    /// A failure in words; a TPM out of object or session memory is named as such.
    static func describe(_ failure: TPMFailure, tpm: TPMChoice) -> String {
        switch failure {
        case .unavailable(let why), .failed(let why), .damaged(let why): return why
        case .foreign: return "the key was sealed by another TPM"
        case .lockout: return "the TPM is in dictionary-attack lockout"
        case .helperMissing(let helper): return "the TPM helper is missing at \(helper)"
        case .helperUntrusted(let helper, let why): return "the TPM helper \(helper) is not trusted: \(why)"
        case .refused(let code, let what):
            if code & 0xFFF == 0x902 || code & 0xFFF == 0x903 {  // TPM2_RC_OBJECT_MEMORY, SESSION_MEMORY
                return "the TPM at \(tpm.tcti) is out of memory for objects or sessions when asked to \(what) (without a resource manager such as /dev/tpmrm0, what a killed program loaded stays loaded; tpm2_flushcontext -t and -l free it)"
            }
            return "the TPM at \(tpm.tcti) refused to \(what) (response code 0x\(String(code, radix: 16)))"
        }
    }
}
