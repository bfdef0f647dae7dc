#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Slots

@Suite("SlotErrorText")
struct SlotErrorTextTests {
    /// One of every case, with the kind of values real code puts there.
    static let everyCase: [SlotError] = [
        .empty(.test("db.password")),
        .badSecretSize(0),
        .badSecretSize(SecretBytes.maximumCount + 1),
        .foreignMachine(path: "/home/u/.local/state/vaultctl/slots/k"),
        .wrongSlot(path: "/home/u/.local/state/vaultctl/slots/k", belongsTo: "other"),
        .tampered(path: "/home/u/.local/state/vaultctl/slots/k", detail: "it fails authentication: it was changed or damaged"),
        .unsafePermissions(path: "/home/u/.local/state/vaultctl", detail: "its mode 755 lets others in; run chmod 700 on it"),
        .serviceUnavailable("no D-Bus session bus"),
        .locked("the default collection is locked"),
        .promptUnanswered("nobody answered the provider's prompt to store slot 'k' within 60 s"),
        .io(path: "/home/u/.local/state/vaultctl/slots/.tmp-1-2", errno: ENOSPC, operation: "write"),
        .io(path: "/x", errno: EACCES, operation: "read"),
        .tpmUnavailable(path: "/home/u/.local/state/vaultctl/device.tpm2", detail: "could not connect to swtpm:path=/s (response code 0xa000a)"),
        .tpmForeign(path: "/home/u/.local/state/vaultctl/device.tpm2"),
        .tpmCannotSeal(detail: "the TPM at device:/dev/tpmrm0 refused to create the sealed object (response code 0x902)"),
        .noTPMToSeal(detail: "no TPM is configured here (VAULTCTL_TPM2_TCTI is unset or 'none', and /dev/tpmrm0 cannot be opened)"),
        .gateHasNoTPM,
        .tpmLockout(seconds: 600),
        .tpmLockout(seconds: nil),
        .tpmHelperMissing(path: "/usr/local/bin/vaultctl-tpm"),
        .gateUnavailable("it is not running set-group-ID vaultctl (no_new_privs is set for it), so it refuses to run"),
        .fleetNotConfigured(path: "/home/u/.config/vaultctl/fleet.json"),
    ]

    @Test func everyCaseIsCovered() {
        // A new case must be added to `everyCase`; this switch stops compiling when one appears.
        for error in Self.everyCase {
            switch error {
            case .empty, .badSecretSize, .foreignMachine, .wrongSlot, .tampered, .unsafePermissions,
                 .serviceUnavailable, .locked, .promptUnanswered, .io, .tpmUnavailable, .tpmForeign, .tpmLockout, .tpmCannotSeal,
                 .noTPMToSeal, .gateHasNoTPM, .tpmHelperMissing, .gateUnavailable, .fleetNotConfigured:
                break
            }
        }
        #expect(Self.everyCase.count == 22)
    }

    @Test(arguments: everyCase)
    func textIsOneLineEndingWithAFullStop(_ error: SlotError) {
        let text = SlotErrorText.describe(error)
        #expect(!text.isEmpty)
        #expect(!text.contains("\n"))
        #expect(!text.contains("\r"))
        #expect(text.hasSuffix("."))
        #expect(!text.hasSuffix(".."))
        #expect(text.first.map { $0.isUppercase || $0 == "/" } == true, "\(text)")
    }

    @Test(arguments: everyCase)
    func descriptionIsTheText(_ error: SlotError) {
        #expect(String(describing: error) == SlotErrorText.describe(error))
        #expect("\(error)" == SlotErrorText.describe(error))
    }

    @Test func textsSpeakInSystemdsVoice() {
        #expect(SlotErrorText.describe(.empty(.test("x"))) == "Slot 'x' is empty; store a value with 'vaultctl store x'.")
        #expect(SlotErrorText.describe(.badSecretSize(0)) == "The secret is empty; give 1 to 65536 bytes.")
        #expect(SlotErrorText.describe(.badSecretSize(65537))
                == "The secret is larger than 65536 bytes; vaultctl keeps small secrets only.")
        #expect(SlotErrorText.describe(.io(path: "/p", errno: ENOENT, operation: "open"))
                == "Failed to open /p: No such file or directory.")
        #expect(SlotErrorText.describe(.unsafePermissions(path: "/p", detail: "it is a symbolic link"))
                == "Refusing /p: it is a symbolic link.")
    }

    /// In the Debian package's build, a missing TPM helper names the package vaultctl-tpm (not `make install`),
    /// as does a TPM the gate cannot use while that package's helper is not there; other builds say what they
    /// said.
    @Test func theTPMPackageIsNamedOnlyInThePackage() throws {
        let package = Installation(.package)
        let source = Installation(.makeInstall(prefix: "/usr/local"))
        try withTemporaryFolder { folder throws in
            let helper = "\(folder)/vaultctl-tpm"
            #expect(source.tpmPackageAdvice(helper: helper) == nil)
            #expect(!source.helperRemedy.contains("apt"), "\(source.helperRemedy)")
            let advice = try #require(package.tpmPackageAdvice(helper: helper))
            #expect(advice.contains("'sudo apt install vaultctl-tpm'") && advice.hasSuffix("."), "\(advice)")
            #expect(package.helperRemedy.contains("'sudo apt install vaultctl-tpm'"), "\(package.helperRemedy)")
            try makeFile(helper, mode: 0o755)
            #expect(package.tpmPackageAdvice(helper: helper) == nil)
        }
        #expect(!Installation.packageBuild)  // swift build and swift test are not the package's build
        #expect(SlotErrorText.describe(.tpmHelperMissing(path: "/usr/local/bin/vaultctl-tpm"), installation: source).contains("'sudo make install' in vaultctl's source tree"))
        #expect(SlotErrorText.describe(.tpmHelperMissing(path: "/usr/bin/vaultctl-tpm"), installation: package).contains("'sudo apt install vaultctl-tpm'"))
    }

    /// Real refusals from a slot holding the marker: none of their texts carries secret bytes.
    @Test func refusalsOfARealSlotNeverCarryTheSecret() throws {
        try withStateFolder { state throws in
            let slot = state.slot()
            try slot.write(.test("k"), .test(secretMarker))
            let file = try rawBytes(state.slotPath("k"))
            var errors: [SlotError] = []

            errors += [failure { try slot.read(.test("missing")) }].compactMap { $0 }
            errors += [failure { try state.slot(otherMachine).read(.test("k")) }].compactMap { $0 }
            errors += [failure { try state.slot(otherMachine).write(.test("k"), .test(secretMarker)) }].compactMap { $0 }
            try makeFile(state.slotPath("copy"), file)
            errors += [failure { try slot.read(.test("copy")) }].compactMap { $0 }
            var flipped = file
            flipped[flipped.count - 1] ^= 1
            try overwrite(state.slotPath("copy"), with: flipped)
            errors += [failure { try slot.read(.test("copy")) }].compactMap { $0 }
            try setPermissions(state.slotPath("k"), 0o644)
            errors += [failure { try slot.read(.test("k")) }].compactMap { $0 }
            errors += [failure { try slot.write(.test("k"), SecretBytes(capacity: 0)) }].compactMap { $0 }

            #expect(errors.count == 7)
            for error in errors {
                let text = SlotErrorText.describe(error)
                #expect(!text.contains(secretMarker), "\(text)")
                #expect(!text.contains("\n"), "\(text)")
                #expect(text.hasSuffix("."), "\(text)")
            }
        }
    }

    /// The slot name in a sealed file's header is read before the AEAD checks anything, so a crafted name
    /// must not reach the one-line message: it is reported as a damaged header.
    @Test func wrongSlotTextStaysOneLineForACraftedHeaderName() throws {
        let crafted = SealedFileFormat.magic + [SealedFileFormat.version] + hereMachine.tag
            + [10] + Array("evil\nline\u{1b}".utf8) + [UInt8](repeating: 0, count: 24 + 16)
        let error = failure {
            try SealedFileFormat.open(.test(crafted), name: .test("k"), machineTag: hereMachine.tag,
                                      key: .random(count: 32), path: "/k")
        }
        #expect(error == .tampered(path: "/k", detail: "its header is damaged"))
        let text = SlotErrorText.describe(try #require(error))
        #expect(!text.contains("\n"), "\(text)")
        #expect(!text.contains("\u{1b}"), "\(text)")
    }

    /// Another program's words reach the terminal as one line without controls: no C0 (newline, ESC), no
    /// DEL, no C1 (CSI, U+009B, which terminals act on), no line or paragraph separators, no format marks.
    @Test func foreignTextIsOneLineWithoutControls() {
        let hostile = "a\nb\u{1b}[31mc\u{9b}2Jd\u{2028}e\u{2029}f\u{85}g\u{202e}h\u{7f}i"
        #expect(SlotErrorText.oneLine(hostile) == "a b [31mc 2Jd e f g h i")
        #expect(SlotErrorText.oneLine(String(repeating: "x", count: 500), limit: 300).count == 300)
        #expect(SlotErrorText.oneLine("Login — Schlüsselbund") == "Login — Schlüsselbund")
    }
}
