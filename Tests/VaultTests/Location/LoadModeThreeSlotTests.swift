import Testing
import Slots
@testable import GateProtocol
@testable import Vault
@testable import VaultRules

/// `decide` over the three slots of issue 35 (docs/plans/fleet-slot.md, section 6): with no fleet it gives
/// exactly what the two-slot rule gave, and with one it gives what section 6 says, case by case.
@Suite struct LoadModeThreeSlotTests {
    /// What a slot may answer, as the table writes it: H holds, E empty, U could not be asked.
    static let answers: [Character: Holding] = ["H": .holds(locked: false), "E": .empty]

    /// Each slot's own error, so the table can say whose error an "unknown" carries.
    static func failure(_ mode: SlotMode) -> SlotError { .serviceUnavailable("\(mode.rawValue) cannot be asked") }

    static func holding(_ letter: Character, _ mode: SlotMode) -> Holding { answers[letter] ?? .unknown(failure(mode)) }

    static let recordStates: [String: ModeRecord.Lookup] = [
        "device": .recorded(.device), "sync": .recorded(.sync), "fleet": .recorded(.fleet),
        "absent": .absent, "unreadable": .unreadable(detail: "it is not a valid mode record"),
    ]

    // MARK: With no fleet, the rule before the fleet

    /// The two-slot rule as it was before the fleet (Location.swift at ac06e52), kept as the oracle.
    static func twoSlotDecide(_ recorded: ModeRecord.Lookup, record: String, _ ask: (SlotMode) -> Holding) -> LoadMode {
        switch recorded {
        case .recorded(let mode):
            switch ask(mode) {
            case .holds(let locked): return .mode(mode, locked: locked)
            case .unknown(let error): return .unknown(error)
            case .empty: break
            }
            let other: SlotMode = mode == .device ? .sync : .device
            switch ask(other) {
            case .holds(let locked): return .mode(other, locked: locked)
            case .unknown(let error): return .unknown(error)
            case .empty: return .none
            }
        case .absent:
            let inDevice = ask(.device)
            if case .unknown(let error) = inDevice { return .unknown(error) }
            let inSync = ask(.sync)
            switch (inDevice, inSync) {
            case (.holds, .holds):
                return .conflicting(record: record, detail: "has no entry for it, and both slots hold a copy")
            case (.holds(let locked), _): return .mode(.device, locked: locked)
            case (_, .holds(let locked)): return .mode(.sync, locked: locked)
            case (_, .unknown(let error)): return .unknown(error)
            default: return .none
            }
        case .unreadable(let detail):
            let inDevice = ask(.device)
            if case .unknown(let error) = inDevice { return .unknown(error) }
            let inSync = ask(.sync)
            switch (inDevice, inSync) {
            case (.holds, .unknown(let error)):
                return .conflicting(record: record, detail: "cannot be read (\(detail)), and the Secret Service, which may hold another copy, could not be asked (\(Vault.reason(error)))")
            case (_, .unknown(let error)): return .unknown(error)
            case (.holds, .holds): return .conflicting(record: record, detail: "cannot be read (\(detail)), and both slots hold a copy")
            case (.holds(let locked), _): return .mode(.device, locked: locked)
            case (_, .holds(let locked)): return .mode(.sync, locked: locked)
            default: return .none
            }
        }
    }

    /// Every (device, sync) answer, a locked copy among them.
    static let twoSlotAnswers: [Holding] = [.holds(locked: false), .holds(locked: true), .empty, .unknown(.serviceUnavailable("no bus"))]

    @Test(arguments: ["device", "sync", "absent", "unreadable"])
    func withNoFleetTheRuleIsTheTwoSlotRule(state: String) throws {
        let recorded = try #require(Self.recordStates[state])
        for inDevice in Self.twoSlotAnswers {
            for inSync in Self.twoSlotAnswers {
                let device = inDevice == .unknown(.serviceUnavailable("no bus")) ? Holding.unknown(.io(path: "/state", errno: 5, operation: "list")) : inDevice
                func answer(_ mode: SlotMode) -> Holding { mode == .device ? device : inSync }
                var askedNow: [SlotMode] = []
                var askedBefore: [SlotMode] = []
                let now = Vault.decide(recorded, record: "/c/modes.json", among: [.device, .sync]) { askedNow.append($0); return answer($0) }
                let before = Self.twoSlotDecide(recorded, record: "/c/modes.json") { askedBefore.append($0); return answer($0) }
                #expect(now == before, "\(state): device \(device), sync \(inSync)")
                #expect(askedNow == askedBefore, "\(state): device \(device), sync \(inSync)")
            }
        }
    }

    // MARK: With a fleet, section 6 case by case

    /// Section 6's answer for each record state and each (device, sync, fleet) answer, written from its
    /// words: D, S, F the slot that holds the value; N none; C conflicting; Ud, Us, Uf unknown with that
    /// slot's error.
    static let truth: [String: [String]] = [
        "device": [
            "HHH D", "HHE D", "HHU D", "HEH D", "HEE D", "HEU D", "HUH D", "HUE D", "HUU D",
            "EHH C", "EHE S", "EHU Uf", "EEH F", "EEE N", "EEU Uf", "EUH Us", "EUE Us", "EUU Us",
            "UHH Ud", "UHE Ud", "UHU Ud", "UEH Ud", "UEE Ud", "UEU Ud", "UUH Ud", "UUE Ud", "UUU Ud",
        ],
        "sync": [
            "HHH S", "HHE S", "HHU S", "HEH C", "HEE D", "HEU Uf", "HUH Us", "HUE Us", "HUU Us",
            "EHH S", "EHE S", "EHU S", "EEH F", "EEE N", "EEU Uf", "EUH Us", "EUE Us", "EUU Us",
            "UHH S", "UHE S", "UHU S", "UEH Ud", "UEE Ud", "UEU Ud", "UUH Us", "UUE Us", "UUU Us",
        ],
        "fleet": [
            "HHH F", "HHE C", "HHU Uf", "HEH F", "HEE D", "HEU Uf", "HUH F", "HUE Us", "HUU Uf",
            "EHH F", "EHE S", "EHU Uf", "EEH F", "EEE N", "EEU Uf", "EUH F", "EUE Us", "EUU Uf",
            "UHH F", "UHE Ud", "UHU Uf", "UEH F", "UEE Ud", "UEU Uf", "UUH F", "UUE Ud", "UUU Uf",
        ],
        "absent": [
            "HHH C", "HHE C", "HHU C", "HEH C", "HEE D", "HEU Uf", "HUH C", "HUE D", "HUU Uf",
            "EHH C", "EHE S", "EHU Uf", "EEH F", "EEE N", "EEU Uf", "EUH Us", "EUE Us", "EUU Us",
            "UHH Ud", "UHE Ud", "UHU Ud", "UEH Ud", "UEE Ud", "UEU Ud", "UUH Ud", "UUE Ud", "UUU Ud",
        ],
        "unreadable": [
            "HHH C", "HHE C", "HHU C", "HEH C", "HEE D", "HEU C", "HUH C", "HUE C", "HUU C",
            "EHH C", "EHE S", "EHU C", "EEH F", "EEE N", "EEU Uf", "EUH C", "EUE Us", "EUU Us",
            "UHH Ud", "UHE Ud", "UHU Ud", "UEH Ud", "UEE Ud", "UEU Ud", "UUH Ud", "UUE Ud", "UUU Ud",
        ],
    ]

    static func expected(_ code: Substring) -> LoadMode? {
        switch code {
        case "D": return .mode(.device, locked: false)
        case "S": return .mode(.sync, locked: false)
        case "F": return .mode(.fleet, locked: false)
        case "N": return LoadMode.none
        case "Ud": return .unknown(failure(.device))
        case "Us": return .unknown(failure(.sync))
        case "Uf": return .unknown(failure(.fleet))
        default: return nil  // C: conflicting, whose words are checked apart
        }
    }

    @Test func theTableHasEveryCase() {
        #expect(Self.truth.count == 5)
        let cases = Self.truth.values.flatMap { $0 }
        #expect(cases.count == 135)
        for (_, rows) in Self.truth {
            #expect(Set(rows.map { $0.prefix(3) }).count == 27)
        }
    }

    @Test(arguments: ["device", "sync", "fleet", "absent", "unreadable"])
    func withAFleetEachCaseIsSectionSixs(state: String) throws {
        let recorded = try #require(Self.recordStates[state])
        for row in try #require(Self.truth[state]) {
            let letters = Array(row.prefix(3))
            let code = row.dropFirst(4)
            var asked: [SlotMode] = []
            let answer = Vault.decide(recorded, record: "/c/modes.json", among: [.device, .sync, .fleet]) { mode in
                asked.append(mode)
                return Self.holding(letters[mode == .device ? 0 : mode == .sync ? 1 : 2], mode)
            }
            if let want = Self.expected(code) {
                #expect(answer == want, "\(state) \(row)")
            } else {
                guard case .conflicting(let path, let detail) = answer else {
                    Issue.record("\(state) \(row): \(answer) is not conflicting")
                    continue
                }
                #expect(path == "/c/modes.json")
                #expect(!detail.isEmpty)
            }
            #expect(Set(asked).count == asked.count, "\(state) \(row): a slot asked twice: \(asked)")
        }
    }

    // MARK: Which slots are asked, in what order

    @Test func theRecordedSlotThatHoldsIsTheOnlyOneAsked() {
        for mode in [SlotMode.device, .sync, .fleet] {
            var asked: [SlotMode] = []
            _ = Vault.decide(.recorded(mode), record: "m", among: [.device, .sync, .fleet]) { asked.append($0); return .holds(locked: false) }
            #expect(asked == [mode])
        }
    }

    @Test func anEmptyRecordedSlotIsFollowedByTheOthersInOrder() {
        var asked: [SlotMode] = []
        _ = Vault.decide(.recorded(.fleet), record: "m", among: [.device, .sync, .fleet]) { asked.append($0); return .empty }
        #expect(asked == [.fleet, .device, .sync])
        asked = []
        _ = Vault.decide(.recorded(.sync), record: "m", among: [.device, .sync, .fleet]) { asked.append($0); return .empty }
        #expect(asked == [.sync, .device, .fleet])
    }

    @Test func askingStopsAtTheFirstSlotThatCouldNotBeAsked() {
        var asked: [SlotMode] = []
        let answer = Vault.decide(.recorded(.device), record: "m", among: [.device, .sync, .fleet]) { mode in
            asked.append(mode)
            return mode == .sync ? .unknown(Self.failure(.sync)) : .empty
        }
        #expect(answer == .unknown(Self.failure(.sync)))
        #expect(asked == [.device, .sync])
    }

    @Test func withNoEntryEverySlotIsAskedDeviceFirst() {
        for state in [ModeRecord.Lookup.absent, .unreadable(detail: "x")] {
            var asked: [SlotMode] = []
            _ = Vault.decide(state, record: "m", among: [.device, .sync, .fleet]) { asked.append($0); return .holds(locked: false) }
            #expect(asked == [.device, .sync, .fleet])
            asked = []
            _ = Vault.decide(state, record: "m", among: [.device, .sync, .fleet]) { asked.append($0); return .unknown(Self.failure($0)) }
            #expect(asked == [.device])
        }
    }

    @Test func theVaultAsksTheFleetLastThroughItsSlot() throws {
        let f = VaultFixture(withFleet: true)
        f.fleet.seed(api, "from the fleet")

        #expect(try f.vault.loadMode(api) == .mode(.fleet, locked: false))
        #expect(f.log.entries == ["device.holding api", "sync.holding api", "fleet.holding api"])
    }

    // MARK: The words of a conflict

    @Test func twoCopiesBesideAnEmptyRecordedSlotAreNamed() {
        let answer = Vault.decide(.recorded(.sync), record: "m", among: [.device, .sync, .fleet]) { $0 == .sync ? .empty : .holds(locked: false) }
        #expect(answer == .conflicting(record: "m", detail: "names the sync slot, which is empty, and the device slot and the fleet both hold a copy"))
    }

    @Test func aFleetThatCouldNotBeAskedBesideOneCopyIsNamedWhenTheRecordCannotBeRead() {
        let answer = Vault.decide(.unreadable(detail: "bad"), record: "m", among: [.device, .sync, .fleet]) { mode in
            mode == .fleet ? .unknown(.serviceUnavailable("no node answered")) : mode == .device ? .holds(locked: false) : .empty
        }
        #expect(answer == .conflicting(record: "m", detail: "cannot be read (bad), and the fleet, which may hold another copy, could not be asked (no node answered)"))
    }
}
