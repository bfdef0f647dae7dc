#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `store` killed with SIGKILL at random moments: after every kill, `read` gives exactly the old value or the
/// new one (never a mix, never a cut-short value), `status` still finds it, and each slot on its own holds
/// nothing or a complete value that was stored: the device file's size is that of a whole sealed value, the
/// keyring item is byte for byte one of them.
///
/// Values have distinct lengths, so a device file's size names the value it holds. In the mixed loop modes
/// are chosen at random, so kills leave the record and the two slots disagreeing in the ways a crash can:
/// both slots holding different values, the record naming either, the record naming an empty slot.
///
/// Each loop runs three chains at once, one slot each, in one state folder: kills also land while another
/// process holds the record's lock or writes the same folders.
@Suite("store: crash safety", .tags(.needsServices))
struct StoreCrashTests {
    static let chains = 3
    static let iterationsPerChain = 60
    static let budget: Duration = .seconds(8)

    enum Modes: String, CaseIterable, Sendable {
        /// Every store to the device slot: the atomic file replace on its own.
        case deviceOnly
        /// Device and sync at random: the record and both slots in every order a crash can leave them.
        case mixed
    }

    @Test(arguments: Modes.allCases)
    func killedStoresLeaveTheOldOrTheNewValue(_ modes: Modes) throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        // Whole stores first (this also makes the folders and the device key), timed.
        let warmUp = sb.uniqueSlot("store-warmup")
        var longest: Duration = .zero
        for mode in modes == .mixed ? ["sync", "device", "sync"] : ["device", "device"] {
            let r = ProcessRunner.run(Paths.vaultctl, ["store", warmUp, "--mode", mode], environment: sb.environmentWithoutPAM(),
                                      stdin: .text("warm-up"))
            try #require(r.status == 0, "store --mode \(mode) failed: \(r)")
            longest = max(longest, r.elapsed)
        }
        let window = KillLoop.window(longest: longest)

        let shared = Shared(sb)
        let names = (0..<Self.chains).map { sb.uniqueSlot("store-crash-\($0)") }
        let (all, took) = KillLoop.run("store", chains: names, budget: Self.budget) { name, deadline in
            Self.chain(shared, name, modes, window: window, until: deadline)
        }

        // Leftover temp files are harmless only if nothing sees them: list shows no such name, and a store
        // that runs to the end and a read still work beside them.
        let leftovers = sb.leftoverTempFiles()
        let listed = try sb.listedWithoutPAM()
        #expect(!listed.keys.contains { $0.hasPrefix(".") }, "list never shows a temp file: \(listed.keys.sorted())")
        for name in names {
            #expect(listed[name] != nil, "\(name) is listed")
            let last = ReliabilityData.value("\(name)-last", count: 7000)
            let final = ProcessRunner.run(Paths.vaultctl, ["store", name, "--mode", "device"],
                                          environment: sb.environmentWithoutPAM(), stdin: .bytes(last))
            #expect(final.status == 0, "\(final)")
            let r = try sb.readReliably(name)
            #expect(r.status == 0 && r.stdout == last, "after a final store: \(r)")
            #expect(sb.keyringValue(name).isEmpty, "the final device store removed any keyring copy")
        }
        print("StoreCrashTests[\(modes)]: a store took up to \(longest), kills within \(Double(window) / 1000) ms; \(all.done) iterations in \(Self.chains) chains, \(all.killed) killed, \(all.finished) finished; reads: \(ChainReport.describe(all.notes)); states after a kill: \(ChainReport.describe(all.states)); temp files left: \(leftovers.count) (\(sb.leftoverTempFilesByFolder()); most at once \(all.mostTempFiles)); \(took)")
    }

    /// One slot's chain of killed stores. Checks are collected, not asserted: this runs on its own thread.
    static func chain(_ shared: Shared<Sandbox>, _ name: String, _ modes: Modes, window: Int64,
                      until deadline: ContinuousClock.Instant) -> ChainReport {
        let sb = shared.value
        let env = sb.environmentWithoutPAM()  // stores need no PAM; a kill leaves no pam_wrapper folder
        var report = ChainReport(name: name)
        let sizes = ReliabilityData.distinctSizes(iterationsPerChain + 1, in: 256...6000)
        var values: [String: [UInt8]] = [:]
        var bySize: [Int: String] = [:]
        func newValue(_ i: Int) -> (String, [UInt8]) {
            let tag = "v\(i)"
            let v = ReliabilityData.value("\(name)-\(tag)", count: sizes[i])
            values[tag] = v
            bySize[Sandbox.sealedFileSize(name: name, valueCount: v.count)] = tag
            return (tag, v)
        }
        let (_, first) = newValue(0)
        let firstMode = modes == .mixed ? "sync" : "device"
        let r0 = ProcessRunner.run(Paths.vaultctl, ["store", name, "--mode", firstMode], environment: env, stdin: .bytes(first))
        guard r0.status == 0 else {
            report.problem("\(name): the first store failed: \(r0)")
            return report
        }
        var current = first

        for i in 1...iterationsPerChain {
            if ContinuousClock.now > deadline { break }
            let mode = modes == .deviceOnly ? "device" : (Bool.random() ? "device" : "sync")
            let (tag, v) = newValue(i)
            let delay = Duration.microseconds(Int64.random(in: 0...window))
            let what = "\(name) iteration \(i): store --mode \(mode) of \(tag) (\(v.count) bytes) killed after \(delay)"
            let run: KilledRunResult
            do {
                run = try KillRunner.run(Paths.vaultctl, ["store", name, "--mode", mode], stdin: v,
                                         environment: env, killAfter: delay, scratch: scratch(sb, name))
            } catch {
                report.problem("\(what): \(error)")
                break
            }
            report.done += 1
            if run.killed {
                report.killed += 1
            } else {
                report.finished += 1
                if run.status != 0 { report.problem("\(what): a store that was not killed must succeed: \(run)") }
            }

            // Each slot on its own: nothing, or a whole value that was stored.
            let deviceSize = sb.deviceFileSize(name)
            let deviceTag = deviceSize.flatMap { bySize[$0] }
            if let deviceSize, deviceTag == nil {
                report.problem("\(what): the device file is \(deviceSize) bytes, the size of no whole sealed value")
            }
            let keyring = sb.keyringValue(name)
            let keyringTag = values.first { $0.value == keyring }?.key
            if !keyring.isEmpty && keyringTag == nil {
                report.problem("\(what): the keyring holds \(describeValue(keyring, among: values))")
            }
            let recorded = sb.recordedMode(name) ?? "none"
            func age(_ t: String?) -> String { t == nil ? "empty" : t == tag ? "new" : "old" }
            let state = "record \(recorded), device \(age(deviceTag)), sync \(age(keyringTag))"
            report.states[state, default: 0] += 1

            // Through vaultctl: the old value or the new one, and status finds it.
            let r: ProcessResult
            do { r = try sb.readReliably(name) } catch {
                report.problem("\(what): \(error)")
                break
            }
            let isNew = r.status == 0 && r.stdout == v
            let isOld = r.status == 0 && r.stdout == current
            if !(isNew || isOld) {
                report.problem("\(what) (\(run.killed ? "killed" : "finished"), \(state)): read gave \(r.status), \(describeValue(r.stdout, among: values)): \(r.stderr)")
            }
            if !run.killed && !isNew { report.problem("\(what): a finished store reads back its own value, not \(r)") }
            let s = sb.vaultctlWithoutPAM(["status", name, "--json"])
            let doc = try? StatusDocument.parse(s.stdout)
            let found = s.status == 0 && (doc?.state == "in-slot" || doc?.state == "on-this-device")
            if !found { report.problem("\(what) (\(state)): status must still find it: \(s.stdoutText) \(s.stderr)") }
            report.mostTempFiles = max(report.mostTempFiles, sb.leftoverTempFiles().count)
            if isNew {
                current = v
                report.note("new")
            } else if isOld {
                report.note("old")
            }
            if !(isNew || isOld) || !found { break }
        }
        return report
    }

    /// A scratch folder for one chain's killed runs (their stdout, stderr and stdin files).
    static func scratch(_ sb: Sandbox, _ name: String) -> String {
        let folder = "\(sb.root)/scratch-\(name)"
        mkdir(folder, 0o700)
        return folder
    }
}
