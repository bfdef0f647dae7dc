import Foundation
import Testing
import TestSupport
@testable import vaultctl

/// Which commands run while the vault is locked, decided once per `CommandKind`.
@Suite("CommandKind while locked")
struct CommandKindLockTests {
    static let allowedWhileLocked: Set<CommandKind> = [.status, .list, .lock, .unlock, .log, .help, .completion, .policyCheck]

    @Test(arguments: CommandKind.allCases)
    func onlyStatusListLockUnlockLogHelpAndPolicyCheckRunWhileLocked(_ kind: CommandKind) {
        #expect(kind.allowedWhileLocked == Self.allowedWhileLocked.contains(kind), "\(kind.rawValue)")
    }

    @Test func everyCommandInTheTableHasAKind() {
        #expect(Set(CommandTable.all.map(\.kind)) == Set(CommandKind.allCases))
    }
}

/// `vaultctl lock` (no password, from anywhere, also locks the Secret Service collection) and `vaultctl unlock`
/// (a nearby session, then PAM). Tests that lock a keyring use a private one, never the shared keyring.
@Suite("vault lock", .tags(.needsServices))
struct VaultLockTests {
    /// An address where no bus listens: `lock` still locks the vault and says the collection was not locked.
    static let noBus = "unix:path=/nonexistent"

    /// One run of each command kind (the table must cover every case), as a locked vault sees it.
    static func example(_ kind: CommandKind, slot: String, policyFile: String) -> [String] {
        switch kind {
        case .store: return ["store", slot]
        case .read: return ["read", slot]
        case .delete: return ["delete", slot]
        case .list: return ["list"]
        case .status: return ["status", slot]
        case .move: return ["move", slot, "--to", "sync"]
        case .recoveryGenerate: return ["recovery", "generate"]
        case .recoveryShow: return ["recovery", "show"]
        case .recoveryStatus: return ["recovery", "status"]
        case .recoveryConfirmCopied: return ["recovery", "confirm-copied"]
        case .supply: return ["supply", slot, "--", "/bin/true"]
        case .askpass: return ["askpass", slot]
        case .allowSupply: return ["allow-supply", slot, "on"]
        case .lock: return ["lock"]
        case .unlock: return ["unlock"]
        case .log: return ["log"]
        case .policyCheck: return ["policy", "check", policyFile]
        case .deviceKeyStatus: return ["device-key", "status"]
        case .deviceKeySeal: return ["device-key", "seal"]
        case .deviceKeyProtect: return ["device-key", "protect"]
        case .help: return ["help"]
        case .completion: return ["completion", "--slots"]
        case .credentialGet: return ["credential", "get"]
        case .credentialStore: return ["credential", "store"]
        case .credentialErase: return ["credential", "erase"]
        case .send: return ["send", slot, "--to", "192.0.2.1", "data"]
        case .receive: return ["receive", "data"]
        case .targetAdd: return ["target", "add", "data", "--", "/bin/true"]
        case .targetList: return ["target", "list"]
        case .targetRemove: return ["target", "remove", "data"]
        }
    }

    @Test func whileLockedEverythingButTheAllowListIsRefusedWithoutAPrompt() throws {
        let sb = try Sandbox(busAddress: Self.noBus)
        let name = sb.uniqueSlot("locked")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let lock = sb.vaultctlWithoutPAM(["lock"])
        try #require(lock.status == 0, "\(lock)")

        for kind in CommandKind.allCases where kind != .unlock {
            let args = Self.example(kind, slot: name, policyFile: "\(Paths.repositoryRoot)/policy/default.json")
            let r = try sb.vaultctlCounted(args, stdin: .text("new-value"))
            if CommandKindLockTests.allowedWhileLocked.contains(kind) {
                #expect(r.status == 0, "\(kind.rawValue) runs while locked: \(r)")
            } else {
                #expect(r.status == 77, "\(kind.rawValue) is refused while locked: \(r)")
                #expect(r.stderr.lowercased().contains("the vault is locked"), "\(kind.rawValue): \(r.stderr)")
                #expect(r.stdout.isEmpty, "\(kind.rawValue)")
            }
        }
        #expect(sb.askpassCalls == 0, "nothing asked for a password")
        let read = try sb.readRepeatingRaces(name)
        #expect(read.status == 77, "the value was not replaced, nor the vault unlocked: \(read)")
    }

    @Test func lockAsksNothingWorksFromARemoteSessionAndLocksTheCollection() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let device = sb.uniqueSlot("lk-device")
            let sync = sb.uniqueSlot("lk-sync")
            try sb.store(device, TestData.textSecret(device), mode: "device")
            try sb.store(sync, TestData.textSecret(sync), mode: "sync")

            // No pam_wrapper, no VAULT_ASKPASS, no terminal: nothing could answer a prompt.
            let lock = sb.vaultctlWithoutPAM(["lock"], overriding: SessionOrigin.tailscale)
            #expect(lock.status == 0, "\(lock)")
            #expect(lock.stderr.contains("Secret Service"), "says what happened to the collection: \(lock.stderr)")

            let locked = CollectionProperty.read("Locked", environment: keyring.clientEnvironment)
            #expect(locked.status == 0 && locked.stdoutText.contains("true"), "the login collection is locked: \(locked) \(locked.stdoutText)")

            let read = try sb.readRepeatingRaces(device)
            #expect(read.status == 77, "\(read)")
            #expect(read.stderr.lowercased().contains("the vault is locked"), "\(read.stderr)")

            let unlock = try sb.vaultctlCounted(["unlock"])
            #expect(unlock.status == 0, "\(unlock)")
            #expect(sb.askpassCalls == 1)
            // Headless, gnome-keyring cannot show its password prompt: unlock says so and how to go on.
            #expect(unlock.stderr.contains("the Secret Service collection 'Login' that 'vaultctl lock' locked is still locked"), "\(unlock.stderr)")
            let again = try sb.readRepeatingRaces(device)
            #expect(again.status == 0, "reads work again: \(again)")
            #expect(again.stdout == TestData.textSecret(device))

            let syncRead = try sb.readRepeatingRaces(sync)
            #expect(syncRead.status == 69, "headless, the keyring stays locked: \(syncRead)")
            #expect(syncRead.stderr.contains("locked"), "\(syncRead.stderr)")
        }
    }

    @Test func unlockFromARemoteSessionIsRefusedBeforeAnyPrompt() throws {
        let sb = try Sandbox(busAddress: Self.noBus)
        let name = sb.uniqueSlot("remote-unlock")
        try sb.store(name, TestData.textSecret(name))
        try #require(sb.vaultctlWithoutPAM(["lock"]).status == 0)

        let r = try sb.vaultctlCounted(["unlock"], overriding: SessionOrigin.tailscale)
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("remote"), "\(r.stderr)")
        #expect(sb.askpassCalls == 0, "no prompt")

        let wrong = try sb.vaultctlCounted(["unlock"], password: .wrong)
        #expect(wrong.status == 77, "\(wrong)")
        #expect(sb.askpassCalls == 1)

        #expect(try sb.readRepeatingRaces(name).status == 77, "still locked")
    }
}
