import Testing
@testable import Slots

@Suite struct HardeningTests {
    /// Runs in the test process: turning off core dumps and dumpability there is harmless.
    @Test func hardeningTurnsOffCoreDumps() {
        Hardening.apply()

        #expect(Hardening.coreDumpsOff)
    }
}
