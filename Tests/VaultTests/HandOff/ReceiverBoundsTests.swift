import Foundation
import Testing
import Slots
@testable import Vault

/// The receiver's bounds on its lock check and its command: a hung one is killed, never left running
/// after the sender has given up.
@Suite struct ReceiverBoundsTests {
    init() { signal(SIGPIPE, SIG_IGN) }

    @Test func aCheckThatHangsIsKilledAtItsBound() {
        let started = ContinuousClock.now
        let (locked, status) = TargetCheck(program: "sleep 30", seconds: 0.3).stillLocked()
        #expect(!locked && status == TargetCheck.timedOutStatus)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func aBoundedCheckThatEndsInTimeGivesItsStatus() {
        #expect(TargetCheck(program: "exit 0", seconds: 5).stillLocked() == (true, 0))
        #expect(TargetCheck(program: "exit 3", seconds: 5).stillLocked() == (false, 3))
    }

    @Test func aCommandThatHangsIsKilledAtItsBound() {
        let secret = Array("bounded".utf8).withUnsafeBytes { SecretBytes(copying: $0) }
        let started = ContinuousClock.now
        let outcome = Delivery.toStdin(["/bin/sh", "-c", "sleep 30"], secret, atMost: 0.3)
        #expect(outcome.timedOut && outcome.status == 128 + SIGKILL)
        #expect(ContinuousClock.now - started < .seconds(5))
        let quick = Delivery.toStdin(["/bin/sh", "-c", "cat >/dev/null"], secret, atMost: 5)
        #expect(!quick.timedOut && quick.status == 0 && quick.readAny)
    }
}
