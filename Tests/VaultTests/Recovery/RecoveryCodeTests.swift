import Testing
import Slots
@testable import Vault

/// Recovery codes: 160 random bits as RFC 4648 base32, eight groups of four letters.
@Suite struct RecoveryCodeTests {
    static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    func bytes(_ values: [UInt8]) -> SecretBytes {
        values.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    // MARK: generate

    @Test func generateGivesEightGroupsOfFourBase32LettersSeparatedByDashes() {
        let code = RecoveryCode.generate().text

        #expect(code.count == 39)
        let groups = code.split(separator: "-", omittingEmptySubsequences: false)
        #expect(groups.count == 8)
        for group in groups {
            #expect(group.count == 4)
            #expect(group.allSatisfy { Self.alphabet.contains($0) }, "'\(group)' has a letter outside A–Z2–7")
        }
    }

    @Test func generateNeverUsesConfusableCharacters() {
        for _ in 0..<50 {
            let code = RecoveryCode.generate().text
            #expect(!code.contains { "0189abcdefghijklmnopqrstuvwxyz".contains($0) })
        }
    }

    @Test func twoGeneratedCodesDiffer() {
        let first = RecoveryCode.generate()
        let second = RecoveryCode.generate()

        #expect(!first.constantTimeEquals(second))
    }

    @Test func recoveryCodeLivesInSlotNamedRecoveryCode() {
        #expect(RecoveryCode.slot.rawValue == "recovery-code")
        #expect(RecoveryCode.randomBytes == 20)
    }

    // MARK: encode (vectors from Python's base64.b32encode, grouped by four)

    @Test func encodeOfTwentyZeroBytesIsAllA() {
        #expect(RecoveryCode.encode(bytes(Array(repeating: 0, count: 20))).text
                == "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA")
    }

    @Test func encodeOfTwentyFFBytesIsAllSeven() {
        #expect(RecoveryCode.encode(bytes(Array(repeating: 0xFF, count: 20))).text
                == "7777-7777-7777-7777-7777-7777-7777-7777")
    }

    @Test func encodeOfCountingBytesMatchesRFC4648() {
        // base64.b32encode(bytes(range(20))) == b'AAAQEAYEAUDAOCAJBIFQYDIOB4IBCEQT'
        #expect(RecoveryCode.encode(bytes(Array(0..<20))).text
                == "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT")
    }

    @Test func encodeOfRandomLookingBytesMatchesRFC4648() {
        // base64.b32encode(bytes.fromhex('3dc0e52b8f1e8f5a7c09ba1d54e6e0c2f4a9b817'))
        let input: [UInt8] = [0x3d, 0xc0, 0xe5, 0x2b, 0x8f, 0x1e, 0x8f, 0x5a, 0x7c, 0x09,
                              0xba, 0x1d, 0x54, 0xe6, 0xe0, 0xc2, 0xf4, 0xa9, 0xb8, 0x17]
        #expect(RecoveryCode.encode(bytes(input)).text == "HXAO-KK4P-D2HV-U7AJ-XIOV-JZXA-YL2K-TOAX")
    }

    @Test func encodeOfRFC4648FoobaVector() {
        // RFC 4648 section 10: BASE32("fooba") = "MZXW6YTB".
        #expect(RecoveryCode.encode(.text("fooba")).text == "MZXW-6YTB")
    }
}
