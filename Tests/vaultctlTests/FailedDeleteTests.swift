import Foundation
import Testing
import TestSupport

/// A `delete` that fails changes nothing about the slot: its value and its permission to be supplied stay.
@Suite("delete: a failed delete keeps the supply permission", .tags(.needsServices))
struct FailedDeleteTests {
    /// A sync slot allowed to be supplied, the bus unreachable: the delete says it could not ask (69), and
    /// the slot may still be supplied afterwards.
    @Test func deleteThatCouldNotAskKeepsTheSupplyPermission() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("failed-delete")
        let s = try sb.vaultctl(["store", name, "--mode", "sync", "--allow-supply"], stdin: .text("kept"))
        try #require(s.status == 0, "\(s)")

        let d = try sb.vaultctl(["delete", name], overriding: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        #expect(d.status == 69, "\(d)")

        let status = sb.vaultctlWithoutPAM(["status", name, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout)) as? [String: Any]
        #expect(object?["allowSupply"] as? Bool == true, "the permission is still there: \(status.stdoutText)")
        let supplied = try sb.vaultctlCounted(["supply", name, "--", "/bin/cat"])
        #expect(supplied.status == 0 && supplied.stdoutText == "kept", "\(supplied)")
    }
}
