import TestSupport
import Foundation
import Testing
@testable import Vault

/// Which slots may be supplied, and when each last was: `<state>/supply.json`.
@Suite struct SupplyStateTests {
    let folder = TemporaryFolder()
    var state: String { folder.appending("state") }

    @Test func aSlotWithNoSettingFollowsThePolicyDefault() throws {
        #expect(try SupplyState(stateFolder: state, allowByDefault: false).isAllowed(api) == false)
        #expect(try SupplyState(stateFolder: state, allowByDefault: true).isAllowed(api) == true)
    }

    @Test func aSettingIsKeptForThatSlotOnly() throws {
        try SupplyState(stateFolder: state, allowByDefault: false).setAllowed(api, true)
        let later = SupplyState(stateFolder: state, allowByDefault: false)
        #expect(try later.isAllowed(api) == true)
        #expect(try later.isAllowed(name("other")) == false)
    }

    @Test func offWinsOverADefaultOfOn() throws {
        let supply = SupplyState(stateFolder: state, allowByDefault: true)
        try supply.setAllowed(api, false)
        #expect(try supply.isAllowed(api) == false)
    }

    @Test func theLastSupplyIsRecordedPerSlot() throws {
        let supply = SupplyState(stateFolder: state, allowByDefault: false)
        #expect(try supply.lastSupply(api) == nil)
        try supply.recordSupply(api, time: 1_800_000_123, origin: "local session")
        let again = SupplyState(stateFolder: state, allowByDefault: false)
        #expect(try again.lastSupply(api) == SupplyState.LastSupply(time: 1_800_000_123, origin: "local session"))
        #expect(try again.lastSupply(name("other")) == nil)
        #expect(try again.isAllowed(api) == false, "recording a supply does not allow anything")
    }

    @Test func forgettingASlotDropsItsSettingAndLastSupply() throws {
        let supply = SupplyState(stateFolder: state, allowByDefault: false)
        try supply.setAllowed(api, true)
        try supply.recordSupply(api, time: 1, origin: "local session")
        try supply.forget(api)
        #expect(try supply.isAllowed(api) == false)
        #expect(try supply.lastSupply(api) == nil)
    }

    @Test func theFileIsPrivateAndHoldsNoSecret() throws {
        let supply = SupplyState(stateFolder: state, allowByDefault: false)
        try supply.setAllowed(api, true)
        let path = "\(state)/supply.json"
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}
