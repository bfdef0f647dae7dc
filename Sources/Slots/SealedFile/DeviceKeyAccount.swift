/// The account a protected vault belongs to, as its device key binds to it: the random id vaultctl-gate
/// keeps in the folder's record and in the account's home (`GateAccount`).
///
/// A key made for an account derives the key that seals its slots from that id too (`DeviceKey`,
/// `TPMDeviceKey`, format version 2), so a later account given the same uid cannot open the folder's slots
/// even where the record's check is passed (a record rewritten by hand, a bug in the gate): its home holds
/// another id. The key file names the account by a tag (a hash of the id), so "made for another account" is
/// said before any key is derived. A key made before the binding (version 1) keeps opening as it did.
public struct DeviceKeyAccount: Sendable {
    /// The account's id as the record and the home spell it.
    let id: [UInt8]
    /// A public 16-byte tag of the id, written in the key file's header.
    let tag: [UInt8]

    public init(id: String) {
        self.id = Array(id.utf8)
        tag = (Array("vaultctl account tag v1\0".utf8) + self.id).withUnsafeBytes { Sodium.publicHash(count: 16, message: $0) }
    }

    /// What a key file made for an account says when opened without one, or by another account.
    static func refusal(path: String, account: DeviceKeyAccount?) -> SlotError {
        guard account != nil else {
            return .tampered(path: path, detail: "it is a protected vault's key, made for one account of vaultctl-gate, and opens only through the gate for that account")
        }
        return .tampered(path: path, detail: "it was made for another account with this user id (an earlier account given the same uid), so it cannot open this account's slots; root can retire the folder (docs/gate.md, \"Accounts\")")
    }
}
