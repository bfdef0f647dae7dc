#if canImport(Glibc)
import Glibc
#endif
import Testing
import Slots
@testable import Vault
@testable import VaultRules

/// `status` of a protected vault: the gate's slot (another process) and the Secret Service (the provider)
/// are asked at the same time, and the answer is decided on both, as when they are asked in turn.
@Suite struct ConcurrentStatusTests {
    /// A device slot behind a gate whose look waits (at most 5 s) until the sync slot's look has begun:
    /// asked one after the other, it gives up and answers "could not look".
    final class WaitingGatedSlot: ForwardingSlot, GatedSlot, @unchecked Sendable {
        let signal: Int32
        init(_ inner: FakeSlot, waitingOn signal: Int32) {
            self.signal = signal
            super.init(inner)
        }
        override func holding(_ name: SlotName) -> Holding {
            var p = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 5000) == 1 else { return .unknown(.serviceUnavailable("the sync look never began")) }
            return inner.holding(name)
        }
        func gatedRead(_ name: SlotName) throws(VaultError) -> SecretBytes { throw .slot(.empty(name)) }
        func gatedWrite(_ name: SlotName, _ secret: SecretBytes) throws(VaultError) {}
        func gatedDelete(_ name: SlotName) throws(VaultError) -> Bool { false }
    }

    /// A sync slot that says, as its look begins, that it has begun.
    final class SignallingSlot: ForwardingSlot, @unchecked Sendable {
        let signal: Int32
        init(_ inner: FakeSlot, signalling signal: Int32) {
            self.signal = signal
            super.init(inner)
        }
        override func holding(_ name: SlotName) -> Holding {
            var byte: UInt8 = 1
            _ = Glibc.write(signal, &byte, 1)
            return inner.holding(name)
        }
    }

    /// The fixture's slots behind the waiting gate and the signalling sync slot, on a pipe closed at the end.
    func withWaitingVault(_ body: (VaultFixture, Vault) throws -> Void) throws {
        let f = VaultFixture()
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read); close(p.write) }
        try body(f, Vault(device: WaitingGatedSlot(f.device, waitingOn: p.read), sync: SignallingSlot(f.sync, signalling: p.write),
                          record: f.record, gate: f.gate))
    }

    @Test func theGatesSlotAndTheSecretServiceAreAskedAtTheSameTime() throws {
        try withWaitingVault { f, vault in
            f.device.seed(api, "from the gate")
            try f.given(api, recordedAs: .device)
            let status = try vault.status(api)
            #expect(status.mode == .device && status.state == .onThisDevice, "\(status)")
            #expect(!status.message.contains("Could not look"), "\(status.message)")
        }
    }

    @Test func bothAnswersCountAsWhenAskedInTurn() throws {
        try withWaitingVault { f, vault in
            // A copy in each slot and no record: the two copies conflict, whichever answered first.
            f.device.seed(api, "device copy")
            f.sync.seed(api, "sync copy")
            let both = try vault.status(api)
            #expect(both.state == .unknown && both.message.contains("both slots hold a copy"), "\(both)")
            // The Secret Service cannot be asked: a device value is not ruled out of it.
            f.sync.unavailable = .serviceUnavailable("no bus")
            try f.given(api, recordedAs: .device)
            let device = try vault.status(api)
            #expect(device.mode == .device && device.message.contains("not ruled out"), "\(device)")
        }
    }
}
