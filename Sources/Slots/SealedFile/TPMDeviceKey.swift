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
/// In a protected vault the key pair is made from the seed and the account's id (`DeviceKeyAccount`): the
/// X25519 seed is BLAKE2b(key: sealed seed, message: "vaultctl tpm2 account seed v1\0" + account id), so the
/// TPM's unseal alone opens nothing for a later account with another id.
///
/// File format: magic `VCTLTPM` + version byte 1 (2: made for an account, and the account's 16-byte tag
/// follows the machine tag), the 16-byte machine tag, the 32-byte public key, then the
/// TPM blob (`TPM2B_NAME` of the storage primary, `TPM2B_PUBLIC` and `TPM2B_PRIVATE` of the sealed object,
/// marshalled by libtss2-mu in the `vaultctl-tpm` helper; see `TPM2` there). Its key id (a hash of the public key, 16 bytes) is written in
/// every slot file sealed under it.
struct TPMDeviceKey {
    static let magic: [UInt8] = Array("VCTLTPM".utf8) + [1]
    static let accountMagic: [UInt8] = Array("VCTLTPM".utf8) + [2]
    static let fileName = "device.tpm2"
    static let maximumFileCount = 4096

    let path: String
    let publicKey: [UInt8]
    let blob: [UInt8]
    /// The account the key pair is made for (version 2); nil for a key from before the binding.
    let account: DeviceKeyAccount?

    /// A public 16-byte name of this key, written in the header of each slot file sealed under it.
    var keyID: [UInt8] { Self.keyID(publicKey) }

    static func keyID(_ publicKey: [UInt8]) -> [UInt8] {
        (Array("vaultctl tpm2 key id v1\0".utf8) + publicKey).withUnsafeBytes { Sodium.publicHash(count: 16, message: $0) }
    }

    /// The key in `folder` (its public parts only: no TPM is asked), nil when there is none. Refuses a file
    /// from another machine, a damaged one, one with unsafe permissions, or one made for another account
    /// (or for an account, looked at without one).
    static func load(folder: String, machine: MachineIdentity, account: DeviceKeyAccount? = nil) throws(SlotError) -> TPMDeviceKey? {
        let path = "\(folder)/\(fileName)"
        guard let bytes = try SecureFile.readPublic(path, maximumCount: maximumFileCount) else { return nil }
        let forAccount = bytes.count >= 8 && Array(bytes[0..<8]) == accountMagic
        let keyAt = forAccount ? 8 + 16 + 16 : 8 + 16
        guard bytes.count > keyAt + Sodium.boxKeyBytes, forAccount || Array(bytes[0..<8]) == magic else {
            throw .tampered(path: path, detail: "it is not a vaultctl TPM-sealed device key")
        }
        guard Array(bytes[8..<24]) == machine.tag else { throw .foreignMachine(path: path) }
        if forAccount {
            guard let account, Array(bytes[24..<40]) == account.tag else {
                throw DeviceKeyAccount.refusal(path: path, account: account)
            }
        }
        let blob = Array(bytes[(keyAt + Sodium.boxKeyBytes)...])
        guard sizedParts(blob) == 3 else {
            throw .tampered(path: path, detail: "its TPM blobs are damaged")
        }
        return TPMDeviceKey(path: path, publicKey: Array(bytes[keyAt..<(keyAt + Sodium.boxKeyBytes)]), blob: blob,
                            account: forAccount ? account : nil)
    }

    /// The X25519 key pair the sealed seed makes: from the seed itself, or for a key made for an account, from
    /// the seed and the account's id.
    static func keyPair(seed: SecretBytes, account: DeviceKeyAccount?) -> (publicKey: [UInt8], secretKey: SecretBytes) {
        guard let account else { return Sodium.boxKeyPair(seed: seed) }
        let message = Array("vaultctl tpm2 account seed v1\0".utf8) + account.id
        let derived = message.withUnsafeBytes { Sodium.hash(count: 32, message: $0, key: seed) }
        return Sodium.boxKeyPair(seed: derived)
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
    /// that seals but cannot unseal never gets a key. With `account`, the key is made for it (version 2).
    static func create(folder: String, machine: MachineIdentity, account: DeviceKeyAccount? = nil, tpm: TPMChoice) throws(SlotError) -> TPMDeviceKey {
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
        let publicKey = keyPair(seed: seed, account: account).publicKey
        let file = account.map { accountMagic + machine.tag + $0.tag } ?? magic + machine.tag
        let written = try (file + publicKey + blob).withTypedUnsafeBytes { (raw) throws(SlotError) -> Bool in
            try SecureFile.write(path, raw, exclusive: true)
        }
        if !written, let winner = try load(folder: folder, machine: machine, account: account) { return winner }
        return TPMDeviceKey(path: path, publicKey: publicKey, blob: blob, account: account)
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
        let pair = Self.keyPair(seed: seed, account: account)
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
