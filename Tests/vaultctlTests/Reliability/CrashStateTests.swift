#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Every way a crash can leave the record and the two slots, made by hand rather than hoped for from random
/// kills: the device slot holding value A or nothing, the keyring holding value B or nothing, the record
/// naming the device slot, the sync slot or nothing, and a write's temp files left beside them.
///
/// `read` takes the recorded slot when it holds a value, else the other; `status` says where a value is and
/// never "none" while one is there; `delete` then leaves nothing anywhere.
@Suite("crash states: record and slots disagreeing", .tags(.needsServices))
struct CrashStateTests {
    struct State: Sendable, CustomTestStringConvertible {
        let device: Bool
        let sync: Bool
        let record: String?

        var testDescription: String {
            "device \(device ? "A" : "empty"), sync \(sync ? "B" : "empty"), record \(record ?? "none")"
        }

        static let all: [State] = [true, false].flatMap { d in
            [true, false].flatMap { s in ["device", "sync", nil].map { State(device: d, sync: s, record: $0) } }
        }

        /// A copy in each slot and no record entry: nothing says which one is the value.
        var conflicting: Bool { record == nil && device && sync }

        /// What `read` must give: the recorded slot's value if it holds one, else the other slot's, else
        /// nothing; with no record and both copies, neither (`conflicting`).
        var expectedRead: String? {
            if conflicting { return "neither" }
            if record == "sync" && sync { return "B" }
            if device { return "A" }
            if sync { return "B" }
            return nil
        }
    }

    @Test(arguments: State.all)
    func readStatusAndDeleteFollowTheSlotsNotTheRecord(_ state: State) throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("state")
        let a = ReliabilityData.value("\(name)-A", count: 300)
        let b = ReliabilityData.value("\(name)-B", count: 500)

        // The device value through vaultctl (it also makes the folders and the device key), then the rest
        // by hand: a keyring item as another program writes it, the record as a crash left it.
        try sb.storeWithoutPAM(name, a, mode: "device")
        if !state.device { try #require(unlink(sb.slotFile(name)) == 0) }
        if state.sync {
            try sb.putKeyringItem(name, b, label: "crash leftover")
        }
        let record = state.record.map { "{\"slots\":{\"\(name)\":\"\($0)\"},\"version\":1}" } ?? "{\"slots\":{},\"version\":1}"
        try #require(FileText.write("\(sb.configFolder)/modes.json", record, mode: 0o600))
        // Temp files a killed write leaves: a half-written sealed file, a half-written record.
        try #require(FileBytes.write("\(sb.stateFolder)/slots/.tmp-4242-1", Array("VCTLSEAL".utf8) + [1, 2, 3]))
        try #require(FileText.write("\(sb.configFolder)/.tmp-4242-2", "{\"slots\":{\"\(name)\":"))

        let r = try sb.readReliably(name)
        let doc = try sb.status(name)
        switch state.expectedRead {
        case "A"?:
            #expect(r.status == 0 && r.stdout == a, "read must give A: \(r)")
            #expect(doc.mode == "device", "\(doc)")
        case "B"?:
            #expect(r.status == 0 && r.stdout == b, "read must give B: \(r)")
            #expect(doc.mode == "sync", "\(doc)")
        case "neither"?:
            #expect(r.status == 78 && r.stdout.isEmpty && r.stderr.contains("modes.json"), "neither copy is served: \(r)")
            #expect(doc.state == "unknown" && doc.mode == nil, "\(doc)")
        default:
            #expect(r.status == 66 && r.stdout.isEmpty, "both slots are empty: \(r)")
            #expect(doc.state == "none", "\(doc)")
        }
        if state.conflicting {
            // Said above: unknown.
        } else if state.sync {
            #expect(doc.state == "in-slot", "a value in the keyring may leave this device: \(doc)")
        } else if state.device {
            #expect(doc.state == "on-this-device", "\(doc)")
        }
        let listed = try sb.listedWithoutPAM()
        #expect(!listed.keys.contains { $0.hasPrefix(".") }, "temp files are never listed: \(listed)")

        // A delete from here leaves nothing anywhere (it says 66 when there was nothing to delete).
        let d = sb.runWithoutPAM(["delete", name])
        #expect(d.status == (state.device || state.sync ? 0 : 66), "\(d)")
        #expect(!Paths.exists(sb.slotFile(name)), "the device file is gone")
        #expect(sb.keyringValue(name).isEmpty, "the keyring item is gone")
        if state.device || state.sync || state.record == "sync" {
            // (A sync entry with nothing here may name another keyring's value: the delete asks, and removes it.)
            #expect(sb.recordedMode(name) == nil, "the record no longer names it: \(sb.recordedModes())")
            if !(state.device || state.sync) { #expect(d.stderr.contains("the record of '\(name)' in the sync slot is removed"), "\(d)") }
        } else {
            // A delete that found nothing asked nothing, so it changed nothing, not even the record.
            #expect(sb.recordedMode(name) == state.record, "\(sb.recordedModes())")
        }
        #expect(try sb.readReliably(name).status == 66)
        #expect(try sb.status(name).state == "none")
    }

    /// What a delete killed after removing the value but before forgetting the supply permission leaves: the
    /// permission, with no value. Deleting again finds nothing (66); the permission must go all the same, so
    /// that a new value stored under the name is not handed to programs without being allowed.
    @Test func aSupplyPermissionDoesNotOutliveItsValue() throws {
        let sb = try Sandbox()
        try sb.relaxChangeGates()
        let name = sb.uniqueSlot("perm-left")
        try #require(sb.runWithoutPAM(["store", name, "--allow-supply"], stdin: .text("first value")).status == 0)
        #expect(try sb.statusObject(name)["allowSupply"] as? Bool == true)
        // The kill: the value and its record entry are gone, supply.json is as it was.
        try #require(unlink(sb.slotFile(name)) == 0)
        try #require(FileText.write("\(sb.configFolder)/modes.json", "{\"slots\":{},\"version\":1}", mode: 0o600))

        let again = sb.runWithoutPAM(["delete", name])
        #expect(again.status == 66, "\(again)")
        try sb.storeWithoutPAM(name, Array("a new value, never allowed".utf8))
        let allowed = try sb.statusObject(name)["allowSupply"] as? Bool
        #expect(allowed == false, "a new value stored under the name must be allowed again before it is supplied")
    }
}
