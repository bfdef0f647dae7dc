import Testing
import TestSupport

/// Secrets never reach stderr, whatever goes wrong.
@Suite("Secrets stay out of stderr", .tags(.needsServices))
struct SecretLeakTests {
    enum Failure: String, CaseIterable, Sendable {
        case wrongPasswordDevice, wrongPasswordSync, declinedDevice, tamperedDevice
    }

    @Test(arguments: Failure.allCases)
    func failedReadKeepsSecretOutOfStderr(_ failure: Failure) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("leak")
        let secret = TestData.textSecret(name)
        let mode = failure == .wrongPasswordSync ? "sync" : "device"
        try sb.store(name, secret, mode: mode)
        var askpass = AskpassMode.correct
        switch failure {
        case .wrongPasswordDevice, .wrongPasswordSync: askpass = .wrong
        case .declinedDevice: askpass = .declining
        case .tamperedDevice:
            var bytes = try #require(FileBytes.read(sb.slotFile(name)))
            bytes[bytes.count - 1] ^= 0x01
            try #require(FileBytes.write(sb.slotFile(name), bytes))
        }
        let r = try sb.read(name, askpass: askpass)
        #expect(r.status != 0, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(!r.stderr.isEmpty, "it says what went wrong")
        #expect(!r.stderr.contains(String(decoding: secret, as: UTF8.self)), "\(r.stderr)")
        #expect(!r.stderr.contains(Fixtures.pamPassword), "the password is not echoed either")
        #expect(!r.stderr.contains(Fixtures.wrongPassword))
    }

    @Test(arguments: ["device", "sync"])
    func successfulReadWritesNothingToStderr(mode: String) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("quiet-\(mode)")
        try sb.store(name, TestData.textSecret(name), mode: mode)
        let r = try sb.read(name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }
}
