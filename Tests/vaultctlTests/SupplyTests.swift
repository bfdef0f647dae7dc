import Foundation
import Testing
import TestSupport

/// `vaultctl supply SLOT [--if-locked CHECK] -- COMMAND` and `vaultctl askpass SLOT`: the ordered checks, each
/// refused before any prompt, then PAM, then the exact secret on COMMAND's stdin (never argv or environment).
///
/// Every prompt goes through a counting askpass program, so "before any prompt" is a count of zero.
@Suite("supply and askpass", .tags(.needsServices))
struct SupplyTests {
    // MARK: Delivery

    @Test func supplyHandsTheExactBytesToCommandOnStdinOnly() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("supply")
        let secret = TestData.binarySecret(name)
        try sb.storeSuppliable(name, secret)
        let consumer = try sb.makeConsumer()
        let check = try sb.makeCheckUnlockedByDelivery()

        let r = try sb.vaultctlCounted(["supply", name, "--if-locked", check.path, "--",
                                        consumer.path, "--user", "a b", "--"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(sb.askpassCalls == 1, "one prompt")
        #expect(check.runs == 3, "the check runs before the prompt, right before delivery, and once after")

        #expect(consumer.stdin == secret, "the exact bytes, then EOF (cat returned)")
        #expect(String(decoding: consumer.arguments, as: UTF8.self) == "--user\na b\n--\n", "COMMAND's own arguments, untouched")
        let marker = Array("bin-\(name)".utf8)
        #expect(!consumer.arguments.contains(bytes: marker), "never in argv")
        #expect(!consumer.environment.isEmpty)
        #expect(!consumer.environment.contains(bytes: marker), "never in the environment")
        #expect(!Array(r.stderr.utf8).contains(bytes: marker))
    }

    @Test func aSuccessfulSupplyShowsAsLastSupplyInStatus() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("last")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        #expect(try sb.statusObject(name)["lastSupply"] is NSNull, "null before any supply")
        #expect(try sb.statusObject(name)["allowSupply"] as? Bool == true)

        let r = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"], overriding: SessionOrigin.lan)
        #expect(r.status == 0, "a LAN client is nearby: \(r)")

        let last = try #require(try sb.statusObject(name)["lastSupply"] as? [String: Any])
        let time = try #require(last["time"] as? String)
        #expect(time.count == 20 && time.hasSuffix("Z") && time.dropFirst(10).hasPrefix("T"), "ISO 8601 time: \(time)")
        let origin = try #require(last["origin"] as? String)
        #expect(origin == "local session", "SSH variables can only make a verdict stricter, so a LAN address leaves it as it was: \(origin)")
    }

    @Test func askpassPrintsTheExactSecretOnStdout() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("askpass")
        let secret = TestData.binarySecret(name)
        try sb.storeSuppliable(name, secret)
        let r = try sb.vaultctlCounted(["askpass", name, "Password for git@example.org: "])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == secret, "exact bytes, no newline added on a pipe")
        #expect(sb.askpassCalls == 1)
        #expect(try sb.statusObject(name)["lastSupply"] is [String: Any], "askpass is a supply too")
    }

    // MARK: Refusals before any prompt

    enum Refusal: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case slotNotAllowed
        case tailscaleSSHConnection, tailscaleSSHClient, tailscaleIPv6, tailscaleMappedIPv4, unparseableSSHConnection
        case blocked
        case targetNotLocked

        var testDescription: String { rawValue }

        /// The SSH variables for the origin refusals.
        var environment: [String: String] {
            switch self {
            case .tailscaleSSHConnection: return SessionOrigin.tailscale
            case .tailscaleSSHClient: return ["SSH_CLIENT": "100.101.102.103 40000 22"]
            case .tailscaleIPv6: return ["SSH_CONNECTION": "fd7a:115c:a1e0::17 40000 fd7a:115c:a1e0::1 22"]
            case .tailscaleMappedIPv4: return ["SSH_CONNECTION": "::ffff:100.64.3.4 40000 ::ffff:192.168.1.1 22"]
            case .unparseableSSHConnection: return ["SSH_CONNECTION": "somewhere.example 40000 10.0.0.1 22"]
            default: return [:]
            }
        }
    }

    @Test(arguments: Refusal.allCases)
    func eachSupplyRefusalComesBeforeAnyPrompt(_ refusal: Refusal) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("refuse")
        if refusal == .slotNotAllowed {
            try sb.store(name, TestData.textSecret(name))
        } else {
            try sb.storeSuppliable(name, TestData.textSecret(name))
        }
        if refusal == .blocked {
            try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":1}}"#)
            let wrong = try sb.readRepeatingRaces(name, askpass: .wrong)
            try #require(wrong.status == 77, "\(wrong)")
        }
        let consumer = try sb.makeConsumer()
        let check = try sb.makeCheck(exiting: refusal == .targetNotLocked ? 1 : 0)

        let r = try sb.vaultctlCounted(["supply", name, "--if-locked", check.path, "--", consumer.path],
                                       overriding: refusal.environment)
        // A target found already unlocked is an outcome of its own: exit 0, nothing supplied.
        #expect(r.status == (refusal == .blocked ? 75 : refusal == .targetNotLocked ? 0 : 77), "\(r)")
        #expect(sb.askpassCalls == 0, "no prompt")
        #expect(!consumer.ran, "nothing delivered")
        #expect(r.stdout.isEmpty)
        let said = r.stderr.lowercased()
        switch refusal {
        case .slotNotAllowed: #expect(said.contains("allow-supply"), "says how to allow it: \(r.stderr)")
        case .blocked: #expect(said.contains("try again"), "says when to retry: \(r.stderr)")
        case .targetNotLocked: #expect(said.contains("already unlocked") && said.contains("nothing was supplied"), "\(r.stderr)")
        default: #expect(said.contains("remote"), "\(r.stderr)")
        }
        if refusal != .targetNotLocked { #expect(check.runs == 0, "the target check is the last check before PAM") }
    }

    @Test func askpassMakesTheSameChecksBeforeAnyPrompt() throws {
        let sb = try Sandbox()
        let allowed = sb.uniqueSlot("ap-allowed")
        let forbidden = sb.uniqueSlot("ap-forbidden")
        try sb.storeSuppliable(allowed, TestData.textSecret(allowed))
        try sb.store(forbidden, TestData.textSecret(forbidden))
        let notLocked = try sb.makeCheck(exiting: 1)

        let runs = [
            try sb.vaultctlCounted(["askpass", forbidden]),
            try sb.vaultctlCounted(["askpass", allowed], overriding: SessionOrigin.tailscale),
            try sb.vaultctlCounted(["askpass", allowed, "--if-locked", notLocked.path]),
        ]
        // Refused twice; the third finds the target already unlocked: askpass declines (exit 1), because its
        // exit 0 would hand the asking program an empty password.
        for (r, status) in zip(runs, [Int32(77), 77, 1]) {
            #expect(r.status == status, "\(r)")
            #expect(r.stdout.isEmpty, "no secret on stdout")
        }
        #expect(sb.askpassCalls == 0)
    }

    @Test func aTargetUnlockedDuringThePromptGetsNothing() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("race")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let consumer = try sb.makeConsumer()
        let check = try sb.makeUnlockingCheck()

        let r = try sb.vaultctlCounted(["supply", name, "--if-locked", check.path, "--", consumer.path])
        #expect(r.status == 0, "already unlocked, nothing supplied: \(r)")
        #expect(r.stderr.contains("unlocked while you authenticated") && r.stderr.contains("nothing was supplied"), "\(r.stderr)")
        #expect(sb.askpassCalls == 1, "it was asked after the prompt")
        #expect(check.runs == 2)
        #expect(!consumer.ran)
        #expect(try sb.statusObject(name)["lastSupply"] is NSNull)
    }

    // MARK: COMMAND failing

    @Test func aFailingCommandIsExitOneNamingItsStatus() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("fails")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let consumer = try sb.makeConsumer(exiting: 3)

        let r = try sb.vaultctlCounted(["supply", name, "--", consumer.path])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("exited 3 after reading the secret"), "names COMMAND's status: \(r.stderr)")
        #expect(consumer.ran)
        #expect(try sb.statusObject(name)["lastSupply"] is NSNull, "a failed supply is not the last supply")
    }

    /// Found before any prompt (SupplyCommandCheckTests has the cases): a usage error, nothing asked.
    @Test func aCommandThatCannotRunIsAUsageErrorBeforeAnyPrompt() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("norun")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let r = try sb.vaultctlCounted(["supply", name, "--", "\(sb.root)/no-such-program"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("no-such-program"), "\(r.stderr)")
        #expect(sb.askpassCalls == 0)
    }

    /// The issue counts failed supplies toward the limit. Each failed supply passed PAM first, and a PAM
    /// success clears the count, so the count never gets past one.
    @Test func threeFailedSuppliesBlockTheNextGatedCommand() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("fails3")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let consumer = try sb.makeConsumer(exiting: 1)
        for _ in 0..<3 {
            let r = try sb.vaultctlCounted(["supply", name, "--", consumer.path])
            #expect(r.status == 1, "\(r)")
        }
        let fourth = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(fourth.status == 75, "\(fourth)")
        #expect(sb.askpassCalls == 3, "no fourth prompt")
    }

    /// The issue lists the slot permission (1) and the origin (2) before the rate limit (3).
    @Test func whileBlockedASlotThatIsNotAllowedIsStillReportedAsNotAllowed() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("order")
        try sb.store(name, TestData.textSecret(name))
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":1}}"#)
        _ = try sb.readRepeatingRaces(name, askpass: .wrong)
        let r = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(r.status == 77 || r.status == 75, "\(r)")
        #expect(sb.askpassCalls == 0)
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("allow-supply"), "\(r.stderr)")
    }

    // MARK: allow-supply

    @Test func allowSupplyIsOffByDefaultAndTurningItOnNeedsPAM() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("allow")
        try sb.store(name, TestData.textSecret(name))
        #expect(try sb.statusObject(name)["allowSupply"] as? Bool == false, "off by default")

        let wrong = try sb.vaultctlCounted(["allow-supply", name, "on"], password: .wrong)
        #expect(wrong.status == 77, "\(wrong)")
        #expect(try sb.statusObject(name)["allowSupply"] as? Bool == false)
        let notYet = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(notYet.status == 77, "\(notYet)")
        #expect(sb.askpassCalls == 1, "only allow-supply asked")

        let on = try sb.vaultctlCounted(["allow-supply", name, "on"])
        #expect(on.status == 0, "\(on)")
        #expect(sb.askpassCalls == 2)
        let supplied = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(supplied.status == 0, "\(supplied)")
        #expect(sb.askpassCalls == 3)

        let off = try sb.vaultctlCounted(["allow-supply", name, "off"])
        #expect(off.status == 0, "\(off)")
        #expect(sb.askpassCalls == 3, "turning it off asks nothing")
        let refused = try sb.vaultctlCounted(["supply", name, "--", "/bin/true"])
        #expect(refused.status == 77, "\(refused)")
        #expect(sb.askpassCalls == 3)
    }
}

/// The rate limit end to end: shared by every process and every gated command; while blocked, 75 and no prompt.
@Suite("rate limit", .tags(.needsServices))
struct RateLimitTests {
    @Test func threeWrongPasswordsBlockTheFourthAttemptWithoutAPrompt() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        for attempt in 1...3 {
            let r = try sb.vaultctlCounted(["read", name], password: .wrong)
            #expect(r.status == 77, "\(r)")
            if attempt == 3 { #expect(r.stderr.contains("blocked until"), "the failure that blocks says so: \(r.stderr)") }
        }
        let r = try sb.vaultctlCounted(["read", name])
        r.expectFailure(75, saying: "try again")
        #expect(r.stderr.range(of: #"until \d\d:\d\d:\d\d"#, options: .regularExpression) != nil, "says when: \(r.stderr)")
        #expect(sb.askpassCalls == 3, "no fourth prompt")

        let supply = try sb.vaultctlCounted(["askpass", name])
        #expect(supply.status == 75, "every gated command is blocked: \(supply)")
        #expect(sb.askpassCalls == 3)
    }

    @Test func failuresFromDifferentGatedCommandsAddUp() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl-mix")
        try sb.storeSuppliable(name, TestData.textSecret(name))
        let failures = [
            try sb.vaultctlCounted(["read", name], password: .wrong),
            try sb.vaultctlCounted(["allow-supply", name, "on"], password: .wrong),
            try sb.vaultctlCounted(["supply", name, "--", "/bin/true"], password: .wrong),
        ]
        for r in failures { #expect(r.status == 77, "\(r)") }
        let r = try sb.vaultctlCounted(["read", name])
        #expect(r.status == 75, "\(r)")
        #expect(sb.askpassCalls == 3)
    }

    /// Failures leave only with the window; a good password in between does not wipe them.
    @Test func aSuccessDoesNotResetTheCount() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl-reset")
        try sb.store(name, TestData.textSecret(name))
        for password in [CountedPassword.wrong, .wrong, .correct, .wrong] {
            _ = try sb.vaultctlCounted(["read", name], password: password)
        }
        let r = try sb.vaultctlCounted(["read", name])
        #expect(r.status == 75, "three failures within the window block, whatever came between: \(r)")
    }

    /// Six processes guess at once. An attempt in progress holds a place in the shared limit, so no more than
    /// three of them get to ask PAM.
    @Test func parallelAttemptsGetNoMoreGuessesThanTheLimit() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl-parallel")
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.vaultctlCounted(["read", name], password: .wrongSlowly,
                                       prefix: ["/bin/sh", "-c", #"for i in 1 2 3 4 5 6; do "$0" "$@" & done; wait"#])
        #expect(r.status == 0, "the shell waited for all six: \(r)")
        #expect(sb.askpassCalls >= 1)
        #expect(sb.askpassCalls <= 3, "\(sb.askpassCalls) prompts for 6 parallel attempts")
        if sb.askpassCalls >= 3 {  // each prompt was a failure counted (a pam_wrapper race asks nothing)
            let after = try sb.vaultctlCounted(["read", name])
            #expect(after.status == 75, "blocked afterwards: \(after)")
        }
    }

    @Test func aShortBlockFromThePolicyEnds() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl-short")
        let secret = TestData.textSecret(name)
        try sb.store(name, secret)
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":2,"windowSeconds":300,"blockSeconds":1}}"#)
        for _ in 0..<2 { #expect(try sb.vaultctlCounted(["read", name], password: .wrong).status == 77) }
        let blocked = try sb.vaultctlCounted(["read", name])
        #expect(blocked.status == 75, "\(blocked)")
        #expect(sb.askpassCalls == 2)

        // Until the block's end, as the state file has it: one second after the failure that started it, so
        // a block longer than the policy's fails here, and one the read does not honour fails below.
        let limit = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(limit.utf8)) as? [String: Any]
        let until = try #require(object?["blockedUntil"] as? Double, "no blockedUntil: \(limit)")
        #expect(until - Date().timeIntervalSince1970 <= 1, "blocked for longer than the policy's 1 s: \(limit)")
        #expect(Wait.until(seconds: 2) { Date().timeIntervalSince1970 > until }, "the block's end never came: \(limit)")
        let r = try sb.vaultctlCounted(["read", name])
        #expect(r.status == 0, "the block is over: \(r)")
        #expect(r.stdout == secret)
    }
}
