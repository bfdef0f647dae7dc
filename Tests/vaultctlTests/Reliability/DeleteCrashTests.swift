#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `delete` killed with SIGKILL at random moments: after every kill, `read` gives the whole value or says the
/// slot is empty (66), and `status` agrees with it: "none" exactly when the value is gone from both slots. A
/// delete that ran to the end leaves nothing. The value is stored again (in a random slot) only once a read
/// says it is gone, so a kill can also land on what an earlier killed delete left: one copy removed, the
/// other still there, the record naming either.
///
/// Half the time a value is followed by a store of a newer value to the other slot, itself killed at a random
/// moment: both slots may then hold different values, the record naming either, and the delete that follows
/// must never make the copy reads did not see (an older or a newer one) the value.
///
/// Each loop runs chains side by side, one slot each, in one state folder.
@Suite("delete: crash safety", .tags(.needsServices))
struct DeleteCrashTests {
    static let chains = 2
    static let iterationsPerChain = 60
    static let budget: Duration = .seconds(8)

    enum Modes: String, CaseIterable, Sendable {
        case device, sync
    }

    /// Two loops: values stored mostly to one slot or the other.
    @Test(arguments: Modes.allCases)
    func killedDeletesLeaveTheWholeValueOrNothing(_ mostly: Modes) throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let env = sb.environmentWithoutPAM()
        // Two whole deletes, timed.
        let warmUp = sb.uniqueSlot("delete-warmup")
        var longest: Duration = .zero
        for mode in ["sync", "device"] {
            let s = ProcessRunner.run(Paths.vaultctl, ["store", warmUp, "--mode", mode], environment: env, stdin: .text("w"))
            try #require(s.status == 0, "store failed: \(s)")
            let r = ProcessRunner.run(Paths.vaultctl, ["delete", warmUp], environment: env)
            try #require(r.status == 0, "delete failed: \(r)")
            longest = max(longest, r.elapsed)
        }
        let window = KillLoop.window(longest: longest)

        let shared = Shared(sb)
        let names = (0..<Self.chains).map { sb.uniqueSlot("delete-crash-\($0)") }
        let (all, took) = KillLoop.run("delete", chains: names, budget: Self.budget) { name, deadline in
            Self.chain(shared, name, mostly, window: window, until: deadline)
        }
        let permissionsLeft = all.notes["gone, but still allowed to be supplied"] ?? 0
        #expect(permissionsLeft == 0, "\(permissionsLeft) times the value was gone but the slot still allowed supply")

        // A whole delete at the end leaves nothing anywhere, whatever the kills left.
        let leftovers = sb.leftoverTempFiles()
        for name in names {
            let r = ProcessRunner.run(Paths.vaultctl, ["delete", name], environment: env)
            #expect(r.status == 0 || r.status == 66, "\(r)")
            #expect(try sb.readReliably(name).status == 66)
            #expect(try sb.status(name).state == "none")
            #expect(sb.deviceFileSize(name) == nil && sb.keyringValue(name).isEmpty)
            // A delete that removed something tidies the record; one that found nothing asked nothing and so
            // changes nothing, not even a record entry a kill left (its slots hold nothing: harmless).
            if r.status == 0 { #expect(sb.recordedMode(name) == nil, "the record no longer names it") }
        }
        let listed = try sb.listedWithoutPAM()
        #expect(!listed.keys.contains { $0.hasPrefix(".") || names.contains($0) }, "\(listed.keys.sorted())")
        print("DeleteCrashTests[\(mostly)]: a delete took up to \(longest), kills within \(Double(window) / 1000) ms; \(all.done) iterations in \(Self.chains) chains, \(all.killed) killed, \(all.finished) finished; afterwards: \(ChainReport.describe(all.notes)); states after a kill: \(ChainReport.describe(all.states)); temp files left: \(leftovers.count) (\(sb.leftoverTempFilesByFolder()); most at once \(all.mostTempFiles)); \(took)")
    }

    static func chain(_ shared: Shared<Sandbox>, _ name: String, _ mostly: Modes, window: Int64,
                      until deadline: ContinuousClock.Instant) -> ChainReport {
        let sb = shared.value
        let env = sb.environmentWithoutPAM()
        var report = ChainReport(name: name)
        let sizes = ReliabilityData.distinctSizes(2 * iterationsPerChain + 2, in: 256...4000)
        var values: [String: [UInt8]] = [:]
        var generation = 0
        func pickMode() -> String {
            Int.random(in: 0..<4) == 0 ? (mostly == .device ? "sync" : "device") : mostly.rawValue
        }
        var current: [UInt8]? = nil
        /// A value an interrupted store may have left in the other slot, which reads do not give.
        var stale: [[UInt8]] = []
        var lastState = ""
        for i in 0..<iterationsPerChain {
            if ContinuousClock.now > deadline { break }
            if current == nil {
                let mode = pickMode()
                let v = ReliabilityData.value("\(name)-g\(generation)", count: sizes[generation])
                values["g\(generation)"] = v
                generation += 1
                let s = ProcessRunner.run(Paths.vaultctl, ["store", name, "--mode", mode, "--allow-supply"], environment: env, stdin: .bytes(v))
                guard s.status == 0 else {
                    report.problem("\(name): store --mode \(mode) failed: \(s)")
                    break
                }
                current = v
                stale = []
                lastState = "a whole store to \(mode)"
                if Bool.random() {
                    // A store of a newer value to the other slot, cut short at a random moment: reads then
                    // give one of the two values, and the other may still be in its slot.
                    let other = mode == "sync" ? "device" : "sync"
                    let w = ReliabilityData.value("\(name)-g\(generation)", count: sizes[generation])
                    values["g\(generation)"] = w
                    generation += 1
                    let delay = Duration.microseconds(Int64.random(in: 0...window))
                    let run: KilledRunResult
                    do {
                        run = try KillRunner.run(Paths.vaultctl, ["store", name, "--mode", other], stdin: w, environment: env,
                                                 killAfter: delay, scratch: StoreCrashTests.scratch(sb, name))
                    } catch {
                        report.problem("\(name): store --mode \(other): \(error)")
                        break
                    }
                    let r: ProcessResult
                    do { r = try sb.readReliably(name) } catch {
                        report.problem("\(name): \(error)")
                        break
                    }
                    guard r.status == 0, r.stdout == v || r.stdout == w else {
                        report.problem("\(name): after a store to \(other) \(run.killed ? "killed" : "finished") read gave \(r.status), \(describeValue(r.stdout, among: values))")
                        break
                    }
                    current = r.stdout
                    stale = [r.stdout == v ? w : v]
                    lastState = "a whole store to \(mode), then a store to \(other) \(run.killed ? "killed after \(delay)" : "that finished")"
                    if run.killed { report.note("deletes after an interrupted store") }
                }
            }
            let v = current!
            let delay = Duration.microseconds(Int64.random(in: 0...window))
            let what = "\(name) iteration \(i): delete (before it: \(lastState)) killed after \(delay)"
            let run = KillRunner.run(Paths.vaultctl, ["delete", name], environment: env, killAfter: delay,
                                     scratch: StoreCrashTests.scratch(sb, name))
            report.done += 1
            if run.killed {
                report.killed += 1
            } else {
                report.finished += 1
                if run.status != 0 { report.problem("\(what): a delete that was not killed must succeed: \(run)") }
            }

            // Each slot on its own: nothing, or the whole value.
            let deviceSize = sb.deviceFileSize(name)
            if let deviceSize, !([v] + stale).contains(where: { deviceSize == Sandbox.sealedFileSize(name: name, valueCount: $0.count) }) {
                report.problem("\(what): the device file is \(deviceSize) bytes, not a whole sealed value")
            }
            let keyring = sb.keyringValue(name)
            if !keyring.isEmpty && keyring != v && !stale.contains(keyring) {
                report.problem("\(what): the keyring holds \(describeValue(keyring, among: values))")
            }
            let state = "device \(deviceSize == nil ? "empty" : "held"), sync \(keyring.isEmpty ? "empty" : "held"), record \(sb.recordedMode(name) ?? "none")"
            report.states[state, default: 0] += 1
            lastState = state

            let r: ProcessResult
            do { r = try sb.readReliably(name) } catch {
                report.problem("\(what): \(error)")
                break
            }
            let s = sb.vaultctlWithoutPAM(["status", name, "--json"])
            let statusState = s.status == 0 ? (try? StatusDocument.parse(s.stdout))?.state : nil
            if r.status == 66 {
                report.note("gone")
                // The permission to supply goes with the value: a new value must be allowed again.
                let object = try? JSONSerialization.jsonObject(with: Data(s.stdout)) as? [String: Any]
                if object?["allowSupply"] as? Bool != false { report.note("gone, but still allowed to be supplied") }
                if statusState != "none" { report.problem("\(what) (\(state)): read says empty, so status must say none: \(s.stdoutText) \(s.stderr)") }
                if deviceSize != nil || !keyring.isEmpty { report.problem("\(what) (\(state)): read says empty but a copy is left") }
                current = nil
            } else if r.status == 0 && r.stdout == v {
                report.note(deviceSize != nil && !keyring.isEmpty ? "kept in both slots" : "kept in one slot")
                if !run.killed { report.problem("\(what): a delete that ran to the end leaves nothing to read") }
                if statusState != "in-slot" && statusState != "on-this-device" {
                    report.problem("\(what) (\(state)): the value is readable, so status must find it: \(s.stdoutText) \(s.stderr)")
                }
            } else {
                report.problem("\(what) (\(state)): read gave \(r.status), \(describeValue(r.stdout, among: values)): \(r.stderr)")
                break
            }
            report.mostTempFiles = max(report.mostTempFiles, sb.leftoverTempFiles().count)
        }
        return report
    }
}
