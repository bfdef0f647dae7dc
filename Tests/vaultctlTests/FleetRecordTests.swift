import Foundation
import Testing
import TestSupport

/// A mode record that names the fleet on a machine with no fleet configured (issue 35, step F2): the value
/// is "unknown", never "none" and never the copy in another slot, through the built vaultctl.
@Suite("A record naming the fleet, with no fleet", .tags(.needsServices))
struct FleetRecordTests {
    /// Stores a device value, then points the record at the fleet, as a newer vaultctl (or a restored
    /// record) would leave it.
    func recordedInTheFleet(_ sb: Sandbox) throws -> String {
        let name = sb.uniqueSlot("fleet-record")
        try sb.store(name, Array("an older device copy".utf8), mode: "device")
        let path = "\(sb.configFolder)/modes.json"
        try FileManager.default.removeItem(atPath: path)
        let text = #"{"version":1,"slots":{"\#(name)":"fleet"}}"#
        try #require(FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                                    attributes: [.posixPermissions: 0o600]))
        return name
    }

    @Test func statusIsUnknownAndSaysNoFleetIsConfigured() throws {
        let sb = try Sandbox()
        let name = try recordedInTheFleet(sb)

        let text = try sb.vaultctl(["status", name])
        let first = text.stdoutText.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("unknown: Could not ask the fleet about '\(name)'"), "\(text)")
        #expect(first.contains("no fleet is configured on this machine (\(sb.configFolder)/fleet.json does not exist)"), "\(text)")
        #expect(text.stdoutText.contains("A copy is in the device slot, but it is not served as the value"), "\(text)")

        let doc = try sb.status(name)
        #expect(doc.state == "unknown" && doc.mode == nil, "\(doc)")
        #expect(doc.text.contains(#""recorded":"fleet""#), "\(doc)")
    }

    @Test func readServesNoOtherCopyAndIs78() throws {
        let sb = try Sandbox()
        let name = try recordedInTheFleet(sb)

        let r = try sb.read(name)

        #expect(r.status == 78, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("no fleet is configured on this machine"), "\(r)")
    }
}
