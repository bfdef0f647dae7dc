import Testing
@testable import Vault

/// What a first device-slot value says when it makes a vault in the state folder (issue 36, point 9): the
/// device key's exposure, and a gate installed elsewhere on the machine when there is one; said only once the
/// write made the vault.
@Suite("New vault notice", .serialized)
struct NewVaultNoticeTests {
    let state = "/home/dana/.local/state/vaultctl"

    @Test func saidOnlyWhenTheWriteMadeTheDeviceKey() {
        NewVaultNotice.expect(state: state) { _ in false }
        #expect(NewVaultNotice.said { _ in false } == nil, "the write failed before the key was made")
        NewVaultNotice.expect(state: state) { _ in false }
        let made = NewVaultNotice.said { $0 == "\(state)/device.key" }
        #expect(made?.contains("made a new vault in \(state)") == true, "\(made ?? "nil")")
        #expect(NewVaultNotice.said { $0 == "\(state)/device.key" } == nil, "said once")
    }

    @Test func aVaultThatHadAKeyBeforeTheWriteIsNotNew() {
        NewVaultNotice.expect(state: state) { $0 == "\(state)/device.tpm2" }
        #expect(NewVaultNotice.said { $0 == "\(state)/device.tpm2" } == nil)
    }

    @Test func aNewVaultWithNoGateAnywhereSaysItsKeyIsReadable() {
        let s = NewVaultNotice.sentence(state: state) { _ in false }
        #expect(s.contains("made a new vault in \(state)") && s.contains("any program running as you can read"))
        #expect(s.contains("no vaultctl-gate is installed"))
    }

    @Test(arguments: NewVaultNotice.gatePlaces)
    func aGateInstalledElsewhereIsNamedWithItsVaultctl(gate: String) {
        let s = NewVaultNotice.sentence(state: state) { $0 == gate || $0 == NewVaultNotice.storePlace }
        #expect(s.contains("installed at \(gate)"), "\(s)")
        let prefix = gate.replacingOccurrences(of: "/libexec/vaultctl/vaultctl-gate", with: "")
        #expect(s.contains("(\(prefix)/bin/vaultctl)") && s.contains("device-key protect"), "\(s)")
    }

    @Test func aStoreFolderWithoutAGateBinaryStillSaysAGateWasHere() {
        let s = NewVaultNotice.sentence(state: state) { $0 == NewVaultNotice.storePlace }
        #expect(s.contains("/var/lib/vaultctl shows a gate was installed here"), "\(s)")
    }
}
