#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Parallel vaultctl processes on one slot and on many: no torn, lost or mixed values, and a reader never
/// sees a partial file. Every process is a real `vaultctl` started at the same moment as the others.
@Suite("concurrency", .tags(.needsServices))
struct ConcurrencyTests {
    /// How many times each writer stores its value.
    static let rounds = 3

    /// Writers store distinct values (4–60 KiB, each a different length) to one slot, each a few times over,
    /// while readers loop `read`: every read gives exactly one of the values (or the one there before), and
    /// at the end the slot holds one of the written values.
    @Test(arguments: [("device", 8, 2), ("sync", 4, 2)])
    func parallelStoresToOneSlotNeverTearOrMix(mode: String, writers: Int, readers: Int) throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("one-\(mode)")
        let initial = ReliabilityData.value("\(name)-initial", count: 100)
        try sb.storeWithoutPAM(name, initial, mode: mode)
        let sizes = ReliabilityData.distinctSizes(writers, in: (4 * 1024)...(60 * 1024))
        let values = (0..<writers).map { ReliabilityData.value("\(name)-w\($0)", count: sizes[$0]) }
        var known: [String: [UInt8]] = ["initial": initial]
        for (i, v) in values.enumerated() { known["w\(i)"] = v }
        let storeEnv = sb.environmentWithoutPAM()
        let readEnv = try sb.environment(askpass: .correct)
        let vaultctl = Paths.vaultctl
        let writersDone = Flag()
        let remaining = Counter()
        _ = remaining.add(writers)

        enum Outcome: Sendable {
            case stored([ProcessResult])
            case reads([ProcessResult])
        }
        var jobs: [@Sendable () -> Outcome] = []
        for v in values {
            jobs.append {
                var results: [ProcessResult] = []
                for _ in 0..<Self.rounds {
                    results.append(ProcessRunner.run(vaultctl, ["store", name, "--mode", mode], environment: storeEnv, stdin: .bytes(v)))
                }
                if remaining.add(-1) == 0 { writersDone.set() }
                return .stored(results)
            }
        }
        for _ in 0..<readers {
            jobs.append {
                var reads: [ProcessResult] = []
                // At least a few reads, and on until every writer is done.
                while !writersDone.isSet || reads.count < 3 {
                    reads.append(Sandbox.gatedRun(["read", name], environment: readEnv))
                    if reads.count > 400 { break }
                }
                return .reads(reads)
            }
        }
        let outcomes = Parallel.run(jobs)

        var readCount = 0
        for outcome in outcomes {
            switch outcome {
            case .stored(let results):
                for r in results {
                    #expect(r.status == 0, "a parallel store failed: \(r)")
                    #expect(!r.stderr.contains("warning"), "\(r.stderr)")
                }
            case .reads(let reads):
                for r in reads {
                    readCount += 1
                    let whole = r.status == 0 && known.values.contains(r.stdout)
                    #expect(whole, "a read during the stores gave \(r.status), \(describeValue(r.stdout, among: known)): \(r.stderr)")
                }
            }
        }
        let last = try sb.readReliably(name)
        #expect(last.status == 0 && values.contains(last.stdout),
                "at the end: \(describeValue(last.stdout, among: known))")
        #expect(sb.recordedMode(name) == mode)
        if mode == "sync" {
            #expect(!Paths.exists(sb.slotFile(name)))
            #expect(sb.keyringValue(name) == last.stdout, "one keyring item, the one read")
        } else {
            #expect(sb.keyringValue(name).isEmpty)
        }
        #expect(sb.leftoverTempFiles().isEmpty, "every store finished, so no temp file is left: \(sb.leftoverTempFiles())")
        print("ConcurrencyTests: \(writers) writers × \(Self.rounds) \(mode) stores to one slot, \(readCount) reads meanwhile")
    }

    /// Many slots stored at once into a fresh state (the device key, the folders and the record are all
    /// created by racing processes): every slot holds its own value afterwards, and the record, updated under
    /// `flock`, lost no entry.
    @Test(arguments: [("device", 20), ("sync", 6)])
    func parallelStoresToManySlotsLoseNothing(mode: String, count: Int) throws {
        let sb = try Sandbox()
        let names = (0..<count).map { sb.uniqueSlot("many-\(mode)-\($0)") }
        let values = names.enumerated().map { ReliabilityData.value($0.element, count: 200 + $0.offset) }
        let env = sb.environmentWithoutPAM()
        let vaultctl = Paths.vaultctl
        let jobs: [@Sendable () -> ProcessResult] = zip(names, values).map { name, value in
            { ProcessRunner.run(vaultctl, ["store", name, "--mode", mode], environment: env, stdin: .bytes(value)) }
        }
        let results = Parallel.run(jobs)
        for (name, r) in zip(names, results) {
            #expect(r.status == 0, "store \(name): \(r)")
        }

        let recorded = sb.recordedModes()
        #expect(recorded.count == count, "the record lists \(recorded.count) of \(count) slots: \(recorded)")
        for name in names { #expect(recorded[name] == mode, "\(name) is recorded as \(recorded[name] ?? "nothing")") }
        let listed = try sb.listedWithoutPAM()
        for name in names { #expect(listed[name] == [mode], "\(name) is listed as \(listed[name] ?? [])") }
        // Every value, read back through vaultctl (two readers at once, each a share of the slots).
        let readEnv = try sb.environment(askpass: .correct)
        let shares: [@Sendable () -> [ProcessResult]] = (0..<2).map { k in
            { stride(from: k, to: names.count, by: 2).map { Sandbox.gatedRun(["read", names[$0]], environment: readEnv) } }
        }
        for (k, reads) in Parallel.run(shares).enumerated() {
            for (j, r) in reads.enumerated() {
                let i = k + 2 * j
                #expect(r.status == 0 && r.stdout == values[i], "\(names[i]): \(r)")
            }
        }
        if mode == "sync" {
            for (name, value) in zip(names, values) { #expect(sb.keyringValue(name) == value, "\(name): one keyring item") }
        }
        #expect(sb.leftoverTempFiles().isEmpty, "\(sb.leftoverTempFiles())")
    }

    /// A device store and a sync store of one slot at the same time. Each writes its slot, records it, then
    /// removes the copy in the other slot; unserialized, each removed the other's new value and both
    /// succeeded with the slot left empty. Now one of the two values stays, in exactly one slot.
    @Test func parallelStoresToBothSlotsOfOneSlotKeepAValue() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let env = sb.environmentWithoutPAM()
        let vaultctl = Paths.vaultctl
        for round in 0..<4 {
            let name = sb.uniqueSlot("both-\(round)")
            let d = ReliabilityData.value("\(name)-device", count: 200)
            let s = ReliabilityData.value("\(name)-sync", count: 300)
            let results = Parallel.run([
                { ProcessRunner.run(vaultctl, ["store", name, "--mode", "device"], environment: env, stdin: .bytes(d)) },
                { ProcessRunner.run(vaultctl, ["store", name, "--mode", "sync"], environment: env, stdin: .bytes(s)) },
            ] as [@Sendable () -> ProcessResult])
            for r in results { #expect(r.status == 0, "round \(round): \(r)") }
            let r = try sb.readReliably(name)
            #expect(r.status == 0 && (r.stdout == d || r.stdout == s),
                    "round \(round): read gave \(r.status), \(describeValue(r.stdout, among: ["device": d, "sync": s]))")
            let doc = try sb.status(name)
            #expect(doc.state != "none", "round \(round): the value was lost: \(doc)")
            let inDevice = Paths.exists(sb.slotFile(name))
            let inKeyring = !sb.keyringValue(name).isEmpty
            #expect(inDevice != inKeyring, "round \(round): exactly one slot holds it (device \(inDevice), keyring \(inKeyring))")
            #expect(sb.recordedMode(name) == (inDevice ? "device" : "sync"), "round \(round): the record names that slot")
        }
    }

    /// Six processes give a wrong password at once. With a limit of 7 failures, each failure is counted once
    /// (none lost to a concurrent update of `ratelimit.json`, none counted twice): exactly as many more
    /// failures as are left block, and not one fewer.
    @Test func parallelFailuresAreEachCountedOnce() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("rl-count")
        try sb.storeWithoutPAM(name, TestData.textSecret(name))
        try sb.writePolicy(#"{"version":1,"rateLimit":{"failures":7,"windowSeconds":300,"blockSeconds":300}}"#)
        let parallel = try sb.vaultctlCounted(["read", name], password: .wrongSlowly,
                                              prefix: ["/bin/sh", "-c", #"for i in 1 2 3 4 5 6; do "$0" "$@" & done; wait"#])
        #expect(parallel.status == 0, "the shell waited for all six: \(parallel)")
        #expect(!parallel.stderr.contains("blocked until"), "six failures of seven block nothing: \(parallel.stderr)")
        // Each prompt answered wrongly is one failure (a process pam_wrapper failed to start asked nothing).
        let counted = sb.askpassCalls
        try #require((1...6).contains(counted), "\(counted) prompts")
        let afterParallel = FileText.read("\(sb.stateFolder)/ratelimit.json") ?? "none"
        var blockedAt: Int?
        for n in (counted + 1)...7 {
            let r = try sb.vaultctlCounted(["read", name], password: .wrong)
            #expect(r.status == 77, "\(r)")
            if r.stderr.contains("blocked until") {
                blockedAt = n
                break
            }
        }
        #expect(blockedAt == nil || blockedAt == 7, "failure \(blockedAt ?? 0) of 7 blocked: a failure was counted twice")
        // A failure recorded by another process while this one waited for the lock must not be dropped.
        #expect(blockedAt == 7, "\(counted) parallel failures, then \(7 - counted) more, did not block: a failure was lost; after the parallel ones ratelimit.json was \(afterParallel)")
        if blockedAt == 7 {
            let blocked = try sb.vaultctlCounted(["read", name])
            #expect(blocked.status == 75, "\(blocked)")
            #expect(sb.askpassCalls == 7, "no prompt while blocked")
        }
    }
}
