import TestSupport
import Foundation
import Synchronization
import Testing
@testable import VaultRules

/// The rate limit: `failures` failures within `windowSeconds` block every gated command for `blockSeconds`,
/// counted in one file that every process shares. Time comes from a `FakeClock`, so nothing here waits.
@Suite struct RateLimiterTests {
    let folder = TemporaryFolder()
    let clock = FakeClock()

    func limiter(_ policy: RateLimitPolicy = .shipped) -> RateLimiter {
        RateLimiter(stateFolder: folder.appending("state"), policy: policy, clock: clock)
    }

    @Test func nothingRecordedBlocksNothing() throws {
        let limiter = limiter()
        try limiter.check()
        #expect(try limiter.blockedUntil() == nil)
    }

    @Test func twoFailuresWithinTheWindowDoNotBlock() throws {
        let limiter = limiter()
        #expect(try limiter.recordFailure() == nil)
        clock.advance(60)
        #expect(try limiter.recordFailure() == nil)
        try limiter.check()
    }

    @Test func theThirdFailureWithinTheWindowBlocksForBlockSeconds() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        clock.advance(100)
        try limiter.recordFailure()
        clock.advance(100)
        let started = clock.now()
        let until = try limiter.recordFailure()

        #expect(until == started + 300)
        #expect(try limiter.blockedUntil() == started + 300)
        let error = thrownError { () throws(VaultError) in try limiter.check() }
        guard case .blocked(let blockedUntil, let now)? = error else {
            Issue.record("expected .blocked, got \(String(describing: error))")
            return
        }
        #expect(blockedUntil == started + 300)
        #expect(now == started, "the message can say how long is left")
    }

    @Test func failuresOlderThanTheWindowNoLongerCount() throws {
        let limiter = limiter()
        try limiter.recordFailure()            // t = 0
        clock.advance(200)
        try limiter.recordFailure()            // t = 200
        clock.advance(101)
        #expect(try limiter.recordFailure() == nil, "the failure at t = 0 is 301 s old: two count, not three")
        try limiter.check()
        clock.advance(49)
        #expect(try limiter.recordFailure() != nil, "t = 200, 301 and 350 lie within 300 s of each other")
    }

    @Test func theBlockHoldsUntilBlockSecondsHavePassed() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        try limiter.recordFailure()
        let until = try #require(try limiter.recordFailure())

        clock.advance(299.5)
        #expect(try limiter.blockedUntil() == until)
        #expect(thrownError { () throws(VaultError) in try limiter.check() }?.blockedUntil == until)

        clock.advance(0.5)
        #expect(try limiter.blockedUntil() == nil)
        try limiter.check()
    }

    @Test func afterABlockEndsTheCountStartsAfresh() throws {
        let limiter = limiter()
        for _ in 0..<3 { try limiter.recordFailure() }
        clock.advance(301)
        #expect(try limiter.recordFailure() == nil)
        #expect(try limiter.recordFailure() == nil)
        try limiter.check()
        #expect(try limiter.recordFailure() != nil, "three new failures block again")
    }

    /// Failures leave only with the window: a good password in between does not wipe them, or a supply
    /// whose consumer fails after a good password could be retried forever.
    @Test func aSuccessfulAttemptDoesNotClearTheCount() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        try limiter.recordFailure()
        try limiter.beginAttempt(pid: 4242)
        #expect(try limiter.endAttempt(failed: false, pid: 4242) == nil)
        #expect(try limiter.recordFailure() != nil, "the third failure in the window blocks")
    }

    /// Attempts in progress hold places: with a limit of 3, a fourth parallel prompt is refused before it shows.
    @Test func attemptsInProgressHoldPlaces() throws {
        let limiter = RateLimiter(stateFolder: folder.appending("state"), policy: RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300),
                                  clock: clock, isAlive: { _, _ in true })
        for pid in Int32(100)..<103 { try limiter.beginAttempt(pid: pid) }
        let error = thrownError { () throws(VaultError) in try limiter.beginAttempt(pid: 103) }
        guard case .busy? = error else {
            Issue.record("expected .busy, got \(String(describing: error))")
            return
        }
        try limiter.endAttempt(failed: false, pid: 100)
        try limiter.beginAttempt(pid: 104)
    }

    /// A process killed after handing its password over counts as a failure (killing a slow answer is no way
    /// around the limit); one abandoned at the prompt does not.
    @Test func aPlaceWhoseProcessDiedAfterAnsweringCountsAsAFailure() throws {
        let dead = Int32(999_999), quit = Int32(999_998)
        let limiter = RateLimiter(stateFolder: folder.appending("state"), policy: RateLimitPolicy(failures: 2, windowSeconds: 300, blockSeconds: 300),
                                  clock: clock, isAlive: { pid, _ in pid != dead && pid != quit })
        try limiter.beginAttempt(pid: quit)
        try limiter.beginAttempt(pid: dead)
        try limiter.markAnswered(pid: dead)
        #expect(try limiter.recordFailure() != nil, "the answered, killed attempt and this failure make two")
    }

    /// Whoever counts a killed, answered attempt is told so (to log it); an attempt abandoned at the prompt
    /// is not one.
    @Test func countingAKilledAnsweredAttemptIsReportedOnce() throws {
        let dead = Int32(999_999), quit = Int32(999_998)
        let told = Mutex(0)
        var limiter = RateLimiter(stateFolder: folder.appending("state"), policy: RateLimitPolicy(failures: 3, windowSeconds: 300, blockSeconds: 300),
                                  clock: clock, isAlive: { pid, _ in pid != dead && pid != quit })
        limiter.abandoned = { n in told.withLock { $0 += n } }
        try limiter.beginAttempt(pid: quit)
        try limiter.beginAttempt(pid: dead)
        try limiter.markAnswered(pid: dead)
        try limiter.beginAttempt(pid: 4242)
        #expect(told.withLock { $0 } == 1)
        _ = try limiter.recordFailure()  // settled already: not told again
        #expect(told.withLock { $0 } == 1)
    }

    @Test func thePolicyNumbersAreHonoured() throws {
        let limiter = limiter(RateLimitPolicy(failures: 1, windowSeconds: 10, blockSeconds: 1))
        let until = try #require(try limiter.recordFailure(), "one failure is enough with failures: 1")
        #expect(until == clock.now() + 1)
        clock.advance(1)
        try limiter.check()
    }

    @Test func everyLimiterOnTheSameFolderSharesTheCount() throws {
        let first = limiter()
        let second = limiter()
        try first.recordFailure()
        try second.recordFailure()
        let until = try #require(try first.recordFailure())
        #expect(try second.blockedUntil() == until)
        #expect(thrownError { () throws(VaultError) in try second.check() }?.blockedUntil == until)
    }

    /// 100 threads record one failure each with `failures: 100`: if one update were lost, none would start
    /// the block; if two saw a full count, two would.
    @Test func concurrentFailuresAreAllCounted() throws {
        let limiter = limiter(RateLimitPolicy(failures: 100, windowSeconds: 3600, blockSeconds: 60))
        let outcomes = Mutex<(starts: [Double], errors: [String])>(([], []))
        DispatchQueue.concurrentPerform(iterations: 100) { _ in
            do {
                let until = try limiter.recordFailure()
                if let until { outcomes.withLock { $0.starts.append(until) } }
            } catch {
                outcomes.withLock { $0.errors.append("\(error)") }
            }
        }
        let (starts, errors) = outcomes.withLock { $0 }
        #expect(errors.isEmpty, "\(errors)")
        #expect(starts.count == 1, "exactly one of the 100 failures starts the block: \(starts)")
        #expect(try limiter.blockedUntil() != nil)
    }

    @Test func aDamagedStateFileStopsGatedCommandsNamingIt() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        let path = folder.appending("state/ratelimit.json")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        let error = thrownError { () throws(VaultError) in try limiter.check() }
        #expect(error?.configurationPath == path, "fails closed, naming the file: \(String(describing: error))")
    }

    @Test func theStateFileIsPrivate() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.appending("state/ratelimit.json"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// Taking and giving back a place rewrites no shared file: a successful attempt leaves `ratelimit.json`
    /// as it was (the same inode, not replaced), and its marker is gone afterwards.
    @Test func aSuccessfulAttemptRewritesNoStateFile() throws {
        let limiter = limiter()
        try limiter.recordFailure()
        let path = folder.appending("state/ratelimit.json")
        var before = stat()
        #expect(stat(path, &before) == 0)
        let marker = limiter.markers.path(limiter.markers.own(4242))
        try limiter.beginAttempt(pid: 4242)
        #expect(FileManager.default.fileExists(atPath: marker))
        try limiter.markAnswered(pid: 4242)
        try limiter.endAttempt(failed: false, pid: 4242)
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_ino == before.st_ino, "ratelimit.json was replaced")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    /// The markers live in a private folder, as private files.
    @Test func attemptMarkersArePrivate() throws {
        let limiter = limiter()
        try limiter.beginAttempt(pid: 4242)
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.appending("state/attempts"))[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: limiter.markers.path(limiter.markers.own(4242)))[.posixPermissions] as? Int
        #expect(folderMode == 0o700 && fileMode == 0o600)
    }

    /// A marker names its process by pid and start time: a later process that got the same pid is not taken
    /// for it, so the dead one's answered place still counts, and this one's own place is a separate file.
    @Test func aReusedPidDoesNotInheritADeadProcessesPlace() throws {
        let me = getpid()
        let start = try #require(AttemptMarkers.startTime(of: me))
        let markers = AttemptMarkers(folder: folder.appending("state/attempts"))
        try FileManager.default.createDirectory(atPath: markers.folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let earlier = AttemptMarkers.Marker(pid: me, startTime: start - 1)  // the same pid, an earlier process
        #expect(FileManager.default.createFile(atPath: markers.path(earlier), contents: Data(AttemptMarkers.answeredText),
                                               attributes: [.posixPermissions: 0o600]))
        let limiter = RateLimiter(stateFolder: folder.appending("state"), policy: RateLimitPolicy(failures: 2, windowSeconds: 300, blockSeconds: 300),
                                  clock: clock)
        #expect(RateLimiter.processIsAlive(me, start) && !RateLimiter.processIsAlive(me, start - 1))
        try limiter.beginAttempt()
        #expect(!FileManager.default.fileExists(atPath: markers.path(earlier)), "the earlier process's place was settled")
        #expect(try limiter.recordFailure() != nil, "its answered place and this failure make two")
    }

    /// A failure is on disk before its marker is gone: the failing attempt's own marker is removed only
    /// after ratelimit.json was written.
    @Test func aFailedAttemptsMarkerGoesOnlyAfterTheFailureIsWritten() throws {
        let limiter = limiter()
        try limiter.beginAttempt(pid: 4242)
        try limiter.markAnswered(pid: 4242)
        #expect(try limiter.endAttempt(failed: true, pid: 4242) == nil)
        #expect(try limiter.file.load().failures.count == 1)
        #expect(!FileManager.default.fileExists(atPath: limiter.markers.path(limiter.markers.own(4242))))
    }

    /// The `pending` list that versions before the markers wrote is still honoured: an answered place of a
    /// process that is gone counts as a failure.
    @Test func aPendingListFromAnEarlierVersionStillCounts() throws {
        try FileManager.default.createDirectory(atPath: folder.appending("state"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let now = clock.now()
        let text = #"{"failures":[],"pending":[{"answered":true,"pid":999999,"time":\#(now)}],"version":1}"#
        #expect(FileManager.default.createFile(atPath: folder.appending("state/ratelimit.json"), contents: Data(text.utf8),
                                               attributes: [.posixPermissions: 0o600]))
        let limiter = RateLimiter(stateFolder: folder.appending("state"), policy: RateLimitPolicy(failures: 2, windowSeconds: 300, blockSeconds: 300),
                                  clock: clock, isAlive: { pid, _ in pid != 999_999 })
        #expect(try limiter.recordFailure() != nil, "the earlier version's answered place and this failure make two")
    }
}
