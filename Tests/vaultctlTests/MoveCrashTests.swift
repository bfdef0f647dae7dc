import Testing
import TestSupport

/// `move` killed with SIGKILL at random moments never loses the secret: after every kill, `read` gives the
/// exact original bytes (from whichever slot holds them) and `status` still finds it.
@Suite("move: crash safety", .tags(.needsServices))
struct MoveCrashTests {
    static let iterations = 40
    /// The loop stops early rather than run longer than this (a slow machine does fewer iterations).
    static let budget: Duration = .seconds(15)
    /// Kills land between 0 and this after the start (a whole move takes about 20–50 ms on an idle
    /// machine); stretched to the measured length of a move when the machine is slower, so kills still
    /// land in every phase: before PAM, during the write, between record and delete, after the end.
    static let minimumMaximumDelay: Duration = .milliseconds(30)
    static let maximumMaximumDelay: Duration = .milliseconds(300)

    @Test func killedMovesNeverLoseTheSecret() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("crash")
        let secret = TestData.binarySecret(name) + TestData.pattern(count: 4096, seed: 11)
        try sb.store(name, secret, mode: "device")
        // Kills land inside PAM too, and a move killed after its password was handed over counts against
        // the rate limit (by design); this test is about the data, so it allows many attempts.
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":100}}"#)
        let env = try sb.environment(askpass: .correct)

        // Two whole moves (there and back), timed, to know how long one takes here and now.
        var longest: Duration = .zero
        for target in ["sync", "device"] {
            let m = try sb.vaultctl(["move", name, "--to", target])
            try #require(m.status == 0, "move --to \(target) failed: \(m)")
            longest = max(longest, m.elapsed)
        }
        let maximumDelay = min(max(Self.minimumMaximumDelay, longest * 1.2), Self.maximumMaximumDelay)
        let maximumMicroseconds = Int64(maximumDelay / .microseconds(1))

        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        var killed = 0
        var finished = 0
        /// After each kill: where copies were found (device file, keyring item).
        var leftInBoth = 0
        for i in 0..<Self.iterations {
            if clock.now - start > Self.budget { break }
            let target = i % 2 == 0 ? "sync" : "device"
            let delay = Duration.microseconds(Int64.random(in: 0...maximumMicroseconds))
            let what = "iteration \(i): move --to \(target) killed after \(delay)"
            let run = KillRunner.run(Paths.vaultctl, ["move", name, "--to", target], environment: env,
                                     killAfter: delay, scratch: sb.root)
            done += 1
            if run.killed {
                killed += 1
            } else {
                finished += 1
                #expect(run.status == 0, "\(what): a move that was not killed must succeed: \(run)")
            }

            let r = try sb.read(name)
            let intact = r.status == 0 && r.stdout == secret
            #expect(intact, "\(what) (\(run.killed ? "killed" : "finished")): read gave \(r), \(r.stdout.count) bytes")
            let doc = try sb.status(name)
            let found = doc.state == "in-slot" || doc.state == "on-this-device"
            #expect(found, "\(what): status must still find it: \(doc)")
            // A copy left in the keyring by an interrupted move must be the whole value too.
            let lookup = sb.secretToolLookup(name)
            let keyringIntact = lookup.stdout.isEmpty || lookup.stdout == secret
            #expect(keyringIntact, "\(what): the keyring holds \(lookup.stdout.count) bytes that are not the secret")
            if !lookup.stdout.isEmpty && Paths.exists(sb.slotFile(name)) { leftInBoth += 1 }
            if !intact || !found || !keyringIntact { break }
        }
        #expect(done >= 10, "only \(done) iterations ran within \(Self.budget)")
        #expect(killed > 0, "no move was killed mid-way (\(finished) finished): the loop tested nothing")

        // A final move runs to the end: to the slot other than the one status names, so it really moves.
        let before = try sb.status(name)
        let target = before.mode == "sync" ? "device" : "sync"
        let final = try sb.vaultctl(["move", name, "--to", target])
        #expect(final.status == 0, "\(final)")
        #expect(!final.stderr.contains("already"), "it moved: \(final.stderr)")
        let last = try sb.read(name)
        #expect(last.status == 0 && last.stdout == secret, "after the final move: \(last)")
        let after = try sb.status(name)
        #expect(after.mode == target, "\(after)")
        #expect(after.state == (target == "sync" ? "in-slot" : "on-this-device"), "\(after)")
        if target == "sync" {
            #expect(!Paths.exists(sb.slotFile(name)), "the device file is gone")
            let lookup = sb.secretToolLookup(name)
            #expect(lookup.stdout == secret, "the keyring holds the secret: \(lookup)")
        } else {
            #expect(Paths.exists(sb.slotFile(name)))
            #expect(sb.secretToolLookup(name).stdout.isEmpty, "the keyring item is gone")
        }
        #expect(try sb.listed()[name] == [target], "exactly one slot holds it after a completed move")
        print("MoveCrashTests: a move took up to \(longest), kills within \(maximumDelay); \(done) iterations, \(killed) killed (\(leftInBoth) left a copy in both slots), \(finished) finished; final move to \(target); \(clock.now - start)")
    }
}
