import Foundation
import Testing
@testable import GateService
@testable import GateProtocol
@testable import VaultRules
import Slots
import Vault

/// The gate's rules in process, without root: a `GateSession` on pipes, its store in a temporary folder and
/// PAM replaced by a scripted gate (GateExchange.swift). The namespace tests of vaultctlTests (GateTests) run
/// the installed binary end to end; these say which rule holds and fail on the one that broke.
@Suite struct GateSessionTests {
    static let a = SlotName("alpha")!, b = SlotName("beta")!

    @Test func aNewStoreSaysSoAndMakesNoFolderForALook() throws {
        let x = GateExchange()
        #expect(try x.hello() == "1 new unlocked")
        #expect(try x.send(.holding(Self.a)) == .ok("empty"))
        #expect(try x.send(.names) == .ok(""))
        #expect(x.finish() == 0)
        #expect(access(x.session.store.folder, F_OK) != 0)  // a look makes nothing
    }

    @Test func aNewValueIsStoredWithoutAPromptAndEachReadAsksOnce() throws {
        let x = GateExchange()
        _ = try x.hello()
        #expect(try x.send(.store(Self.a), value: "one") == .ok(""))
        #expect(x.gate.reasons.isEmpty)
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        // A grant opens one read: the second read asked again.
        #expect(x.gate.reasons == ["read slot 'alpha'", "read slot 'alpha'"])
        #expect(x.finish() == 0)
        #expect(x.audit.map { "\($0.command) \($0.result)" } == ["store ok", "authenticate ok", "read ok", "authenticate ok", "read ok"])
    }

    @Test func anAuthenticationOpensOnlyTheSlotsItNames() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        _ = try x.send(.store(Self.b), value: "two")
        #expect(try x.send(.authenticate(.slots([Self.a]), reason: "move slot 'alpha' to the sync slot")) == .ok(""))
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(try x.send(.read(Self.b)) == .ok("two"))
        #expect(x.gate.reasons == ["move slot 'alpha' to the sync slot", "read slot 'beta'"])
        // Free text with another slot's name is shown with what it really opens.
        #expect(try x.send(.authenticate(.slots([Self.a]), reason: "read slot 'beta'")) == .ok(""))
        #expect(x.gate.reasons.last == "read slot 'beta' (opens slot 'alpha')")
        #expect(x.finish() == 0)
    }

    @Test func aFailedAuthenticationOpensNothingAndItsLineSaysFailed() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        x.gate.script(.authenticationFailed("no"))
        guard case .refused(.authenticationFailed) = try x.send(.read(Self.a)) else {
            Issue.record("a failed authentication gave the value")
            return
        }
        #expect(x.finish() == 0)
        let last = try #require(x.audit.last)
        #expect(last.command == "read" && last.result == "failed" && last.slot == "alpha")
        #expect(x.gate.reasons.count == 1)
    }

    @Test func aFailedAuthenticationOpensNothingForTheNextRequest() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        x.gate.script(.authenticationFailed("no"))
        _ = try x.send(.authenticate(.slots([Self.a]), reason: "read slot 'alpha'"))
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(x.gate.reasons.count == 2)  // the read asked again
        #expect(x.finish() == 0)
    }

    @Test func aLockedVaultRefusesGatedVerbsBeforeAnyPromptAndUnlockAsks() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        #expect(try x.send(.lock) == .ok(""))
        for request in [GateRequest.read(Self.a), .store(Self.b), .delete(Self.a), .authenticate(.none, reason: "x")] {
            #expect(try x.send(request, value: request.verb == "store" ? "v" : nil) == .refused(.vaultLocked))
        }
        #expect(x.gate.reasons.isEmpty)
        #expect(try x.send(.holding(Self.a)) != .ok("empty"))  // a look still answers
        #expect(try x.send(.unlock) == .ok(""))
        #expect(x.gate.reasons == ["unlock the vault"])
        #expect(try x.send(.unlock) == .ok(""))  // unlocked already: nothing asked
        #expect(x.gate.reasons.count == 1)
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(x.finish() == 0)
    }

    @Test func unlockFromARemoteSessionIsRefusedBeforeThePrompt() throws {
        let x = GateExchange(origin: GateExchange.remote)
        _ = try x.hello()
        _ = try x.send(.lock)
        guard case .refused(.refused(let why)) = try x.send(.unlock) else {
            Issue.record("a remote session unlocked the vault")
            return
        }
        #expect(why.hasPrefix("unlocking needs a session on this machine or the local network"))
        #expect(x.gate.reasons.isEmpty)
        #expect(x.finish() == 0)
        #expect(x.audit.last.map { "\($0.command) \($0.result)" } == "unlock refused")
    }

    @Test func verbsThatNeedAnEarlierAuthenticationAreRefusedWithoutOne() throws {
        let x = GateExchange()
        _ = try x.hello()
        guard case .refused(.notAuthenticated(let why)) = try x.send(.importValue(Self.a), value: "v") else {
            Issue.record("a value was moved in without an authentication for every slot")
            return
        }
        #expect(why == "moving a value in needs an authentication for every slot first")
        #expect(try x.send(.finishImport) == .refused(.notAuthenticated("protecting the vault needs an authentication for every slot first")))
        // Refused before the admission: nothing was made.
        #expect(access(x.session.store.folder, F_OK) != 0)
        // One slot's authentication is not every slot's.
        _ = try x.send(.authenticate(.slots([Self.a]), reason: "read slot 'alpha'"))
        #expect(try x.send(.finishImport) == .refused(.notAuthenticated("protecting the vault needs an authentication for every slot first")))
        _ = try x.send(.authenticate(.everySlot, reason: "protect the vault"))
        #expect(x.gate.reasons.last == "protect the vault (opens every slot)")
        #expect(try x.send(.importValue(Self.a), value: "v") == .ok(""))
        #expect(try x.send(.finishImport) == .ok(""))
        #expect(x.finish() == 0)
        #expect(try x.session.store.isProtected())
    }

    @Test func sealingNeedsAnEarlierAuthenticationAndThenATPM() throws {
        let x = GateExchange()
        _ = try x.hello()
        #expect(try x.send(.sealDeviceKey) == .refused(.slot(.gateHasNoTPM)))  // no store, no TPM
        _ = try x.send(.store(Self.a), value: "one")
        #expect(try x.send(.sealDeviceKey) == .refused(.notAuthenticated("sealing the device key needs an authentication first")))
        _ = try x.send(.authenticate(.none, reason: "seal the device key with the TPM"))
        #expect(try x.send(.sealDeviceKey) == .refused(.slot(.gateHasNoTPM)))
        #expect(x.finish() == 0)
    }

    @Test func aVerbThatNeverAsksIsStillRefusedWhileBlockedAndTheLogComesFirst() throws {
        let x = GateExchange(policy: .allowingFailures(1))
        _ = try x.hello()
        _ = try x.send(.authenticate(.everySlot, reason: "move the vault behind vaultctl-gate"))
        _ = try x.send(.recordFailure)  // blocks
        guard case .refused(.blocked) = try x.send(.importValue(Self.a), value: "v") else {
            Issue.record("an import went on while blocked")
            return
        }
        try FileManager.default.removeItem(atPath: x.session.audit.path)
        #expect(mkdir(x.session.audit.path, 0o700) == 0)
        guard case .refused(.slot(.unsafePermissions)) = try x.send(.importValue(Self.a), value: "v") else {
            Issue.record("the rate limit was checked before the log")
            return
        }
        #expect(x.finish() == 0)
    }

    @Test func theRateLimitBlocksBeforeThePromptOnceFailuresAreUsedUp() throws {
        let x = GateExchange(policy: .allowingFailures(2))
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        x.gate.script(.authenticationFailed("no"), .authenticationFailed("no"))
        _ = try x.send(.read(Self.a))
        guard case .refused(.authenticationFailedAndBlocked) = try x.send(.read(Self.a)) else {
            Issue.record("the second failure did not block")
            return
        }
        guard case .refused(.blocked) = try x.send(.read(Self.a)) else {
            Issue.record("a blocked read was not refused")
            return
        }
        #expect(x.gate.reasons.count == 2)  // the third read asked nothing
        #expect(x.finish() == 0)
    }

    @Test func theLockIsCheckedBeforeTheLogAndTheLogBeforeThePrompt() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        // A log that cannot take a line: a folder where the file should be.
        try FileManager.default.removeItem(atPath: x.session.audit.path)
        #expect(mkdir(x.session.audit.path, 0o700) == 0)
        let unwritable = try x.send(.read(Self.a))
        guard case .refused(.slot(.unsafePermissions)) = unwritable else {
            Issue.record("a read with a log that cannot take a line was not refused for it: \(unwritable)")
            return
        }
        #expect(x.gate.reasons.isEmpty)
        _ = try x.send(.lock)
        #expect(try x.send(.read(Self.a)) == .refused(.vaultLocked))
        #expect(x.finish() == 0)
    }

    @Test func aCancelledPromptWritesNoLineAndCountsNoFailure() throws {
        let x = GateExchange(policy: .allowingFailures(1))
        x.gate.asks = true
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        let lines = x.audit.count
        guard case .refused(.notAuthenticated) = try x.send(.read(Self.a), answer: nil) else {
            Issue.record("a cancelled prompt was not refused as cancelled")
            return
        }
        #expect(x.audit.count == lines)
        // With one failure allowed, a counted cancel would block this read.
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(x.finish() == 0)
    }

    @Test func aGuessWhoseGateWasKilledIsLoggedByTheGateThatCountsIt() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        // Another gate of this user took a place and had the password handed over, then was killed.
        let other = RateLimiter(stateFolder: x.session.store.folder, policy: Policy.builtIn.rateLimit)
        try other.beginAttempt(pid: 999_999)
        try other.markAnswered(pid: 999_999)
        #expect(try x.send(.read(Self.a)) == .ok("one"))
        #expect(x.finish() == 0)
        let counted = x.audit.filter { $0.reason == AuditLog.abandonedReason }
        #expect(counted.count == 1 && counted.first?.result == "failed")
    }

    @Test func aCounterpartGoneAtThePromptEndsTheExchangeWithoutAnAnswer() throws {
        let x = GateExchange()
        x.gate.asks = true
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        #expect(GateFrame(.request, text: GateRequest.read(Self.a).text).write(to: x.toGate))
        #expect(try x.reader.next(within: 10).get().word == .promptHidden)
        x.hangUp()
        #expect(x.finish() == 74)
        // Nothing more was sent: no value, no verdict.
        guard case .failure(.endOfInput) = x.reader.next(within: 10) else {
            Issue.record("the gate sent more after the CLI was gone")
            return
        }
    }

    @Test func aReplacementAsksUnlessThePolicySaysNotAndADeleteAlike() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = try x.send(.store(Self.a), value: "one")
        #expect(try x.send(.store(Self.a), value: "two") == .ok(""))
        #expect(x.gate.reasons == ["replace the value in slot 'alpha'"])
        #expect(try x.send(.delete(Self.a)) == .ok(""))  // opened by the replacement's authentication
        #expect(x.gate.reasons.count == 1)
        #expect(try x.send(.delete(Self.a)) == .refused(.slot(.empty(Self.a))))
        #expect(x.finish() == 0)
        var lenient = Policy.builtIn
        lenient.gates = ChangeGates(storeOver: false, delete: false)
        let y = GateExchange(policy: lenient)
        _ = try y.hello()
        _ = try y.send(.store(Self.b), value: "one")
        _ = try y.send(.store(Self.b), value: "two")
        _ = try y.send(.delete(Self.b))
        #expect(y.gate.reasons.isEmpty)
        #expect(y.audit.map { "\($0.command) \($0.result)" } == ["store ok", "store replaced", "delete ok"])
        #expect(y.finish() == 0)
    }

    @Test func aValueStoredByAnotherExchangeAfterTheLookIsNotReplacedWithoutAPassword() throws {
        let first = GateExchange()
        _ = try first.hello()
        _ = try first.send(.store(Self.b), value: "seed")  // the folder and its key
        let id = first.session.boundID  // read while the session waits for its next request
        // The other exchange's value lands while this one waits for the slots' lock, after it looked.
        let lock = try FileLock(path: "\(first.session.store.folder)/.slots.lock", waitingAtMost: 1)
        #expect(GateFrame(.request, text: GateRequest.store(Self.a).text).write(to: first.toGate))
        #expect(GateFrame(.secret, Array("mine".utf8).withUnsafeBytes { SecretBytes(copying: $0) }).write(to: first.toGate))
        // Waited for as the kernel sees it: the session blocked on the lock file (/proc/locks), after its look.
        #expect(waitUntilBlocked(on: "\(first.session.store.folder)/.slots.lock"))
        // Another gate of this account writes under its own lock-free path (as one that took the lock first would).
        let theirs = SealedFileSlot(folder: first.session.store.folder, machine: first.session.machine, tpm: nil,
                                    account: id.map(DeviceKeyAccount.init(id:)))
        do throws(SlotError) { try theirs.write(Self.a, Array("theirs".utf8).withUnsafeBytes { SecretBytes(copying: $0) }) } catch {
            Issue.record("the other exchange's write failed: \(error)")
        }
        lock.release()
        let reply = try first.reader.next(within: 15).get()
        #expect(reply.word == .refused && GateRefusal.decode(reply.text).map(Reply.refused) == .refused(.changedMeanwhile(Self.a)))
        let second = GateExchange(store: first)
        _ = try second.hello()
        #expect(try second.send(.read(Self.a)) == .ok("theirs"))
        _ = first.finish()
        _ = second.finish()
    }
}

/// Whether a `flock` on `path` is waited for (a `->` line of /proc/locks names its inode), within 10 s.
func waitUntilBlocked(on path: String) -> Bool {
    var st = stat()
    guard stat(path, &st) == 0 else { return false }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        if locks.split(separator: "\n").contains(where: { $0.contains("->") && $0.contains(":\(st.st_ino) ") }) { return true }
        usleep(2_000)
    }
    return false
}

/// The rows themselves: every verb has one, and what the CLI is told matches what the gate does.
@Suite struct GateRuleTests {
    static let every: [GateRequest] = [
        .holding(SlotName("a")!), .names, .read(SlotName("a")!), .store(SlotName("a")!), .delete(SlotName("a")!),
        .authenticate(.none, reason: "x"), .lock, .unlock, .importValue(SlotName("a")!), .finishImport, .log(1),
        .deviceKey, .recordFailure, .sealDeviceKey,
    ]

    /// Fails to compile when a verb is added and not sampled in `every` above (its case must be named here).
    static func sampled(_ request: GateRequest) -> Bool {
        switch request {
        case .holding, .names, .read, .store, .delete, .authenticate, .lock, .unlock, .importValue, .finishImport, .log,
             .deviceKey, .recordFailure, .sealDeviceKey:
            return every.contains(where: { $0.verb == request.verb })
        }
    }

    @Test func everyVerbIsSampled() {
        #expect(Self.every.allSatisfy(Self.sampled) && Set(Self.every.map(\.verb)).count == Self.every.count)
    }

    @Test func theRowSaysTheVerbAsksExactlyWhenTheCLIIsToldItMay() {
        for request in Self.every {
            #expect(GateRule.of(request).asks == request.mayAsk, "\(request.verb)")
        }
    }

    @Test func aVerbThatAsksOrChangesSlotsHasItsAuditWordAndItsChecks() {
        for request in Self.every {
            let rule = GateRule.of(request)
            if rule.asks || rule.takesSlotsLock {
                #expect(rule.audit != nil, "\(request.verb)")
                #expect(rule.folder != .untouched && rule.checks.isSuperset(of: [.auditLog, .rateLimit]), "\(request.verb)")
            }
            // A locked vault's slots do not change.
            if rule.takesSlotsLock { #expect(rule.checks.contains(.vaultLock), "\(request.verb)") }
        }
    }

    @Test func aVerbWhoseRowDoesNotAllowItCannotAskOrTakeTheSlotsLock() throws {
        let x = GateExchange()
        _ = try x.hello()
        _ = x.finish()
        x.session.rule = GateRule.of(.names)
        var refused = 0
        do { try x.session.authenticate(.none, reason: "x") } catch { refused += 1 }
        do { try x.session.underSlotsLock { () throws(VaultError) -> Int in 1 } } catch { refused += 1 }
        #expect(refused == 2)
        #expect(x.gate.reasons.isEmpty)
    }
}
