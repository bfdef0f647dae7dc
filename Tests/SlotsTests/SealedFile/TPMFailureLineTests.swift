import Testing
@testable import Slots

/// The one line the `vaultctl-tpm` helper prints for a failure reads back as the same failure, whatever the
/// texts hold; anything else is not taken for a failure.
@Suite("TPMFailure line")
struct TPMFailureLineTests {
    static let failures: [TPMFailure] = [
        .unavailable("the TPM at swtpm:path=/s did not answer within 5 s"),
        .foreign,
        .lockout(seconds: 120),
        .lockout(seconds: nil),
        .damaged("this TPM refuses its sealed object as changed"),
        .refused(code: 0x902, what: "load the sealed object"),
        .failed("could not make a pipe"),
    ]

    @Test(arguments: failures)
    func roundTrips(_ failure: TPMFailure) {
        #expect(TPMFailure(line: failure.line) == failure)
        #expect(!failure.line.contains("\n"))
    }

    @Test func aTabOrNewlineInATextCannotShiftTheFields() {
        let line = TPMFailure.unavailable("could not connect to swtpm:path=/a\tb\nforeign").line
        #expect(TPMFailure(line: line) == .unavailable("could not connect to swtpm:path=/a b foreign"))
    }

    @Test(arguments: ["", "foreign\textra", "lockout", "refused\tx\tload", "ok", "unavailable"])
    func otherLinesAreNotFailures(_ line: String) {
        #expect(TPMFailure(line: line) == nil)
    }

    @Test func sizedPartsCountsExactFits() {
        #expect(TPMDeviceKey.sizedParts([0, 1, 9, 0, 0, 0, 2, 7, 7]) == 3)
        #expect(TPMDeviceKey.sizedParts([0, 1, 9, 0, 0, 0, 3, 7, 7]) == nil, "the last part runs past the end")
        #expect(TPMDeviceKey.sizedParts([0, 1, 9, 0]) == nil, "a cut length")
        #expect(TPMDeviceKey.sizedParts([]) == 0)
    }
}
