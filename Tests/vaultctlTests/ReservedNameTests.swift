import Foundation
import Testing
import TestSupport

/// Names beginning with `vaultctl.` are kept for vaultctl's own values (issue 35, step F2): the commands
/// that change a slot or hand out its value (to a command, an askpass request, another machine) refuse them with 64 before anything is asked or written, `list`
/// does not show them, and a value that already has such a name stays readable.
@Suite("Reserved slot names", .tags(.needsServices))
struct ReservedNameTests {
    static func commands(_ name: String) -> [[String]] {
        [["store", name], ["store", name, "--mode", "sync"], ["move", name, "--to", "sync"], ["delete", name],
         ["supply", name, "--", "/bin/true"], ["allow-supply", name, "on"], ["askpass", name],
         ["send", name, "--to", "nowhere.invalid", "unlock"]]
    }

    @Test func commandsThatChangeOrSupplyASlotRefuseAReservedName() throws {
        let sb = try Sandbox()
        let name = "vaultctl." + sb.uniqueSlot("reserved")
        for args in Self.commands(name) {
            let r = try sb.vaultctl(args, stdin: .text("secret-for-a-reserved-name"))
            #expect(r.status == 64, "\(args): \(r)")
            #expect(r.stdout.isEmpty, "\(args): \(r)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("'\(name)' is a reserved name: names beginning with 'vaultctl.' are kept for vaultctl's own values"), "\(args): \(r.stderr)")
        }
        #expect(sb.wroteNothing, "no vaultctl folder was made")
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "nothing reached the keyring")
    }

    @Test func aNameThatOnlyContainsTheWordIsNotReserved() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("my-vaultctl.notes")
        try sb.store(name, Array("v".utf8))
        #expect(try sb.listed()[name] == ["device"])
    }

    @Test func anExistingValueWithAReservedNameStaysReadableAndIsNotListed() throws {
        let sb = try Sandbox()
        let name = "vaultctl." + sb.uniqueSlot("kept")
        let secret = Array("a value vaultctl keeps".utf8)
        let put = sb.secretTool(["store", "--label=reserved", "xdg:schema", "org.vaultctl.Slot", "slot", name],
                                stdin: .bytes(secret))
        try #require(put.status == 0, "secret-tool store failed: \(put)")
        defer { _ = sb.secretTool(["clear", "xdg:schema", "org.vaultctl.Slot", "slot", name]) }

        let read = try sb.read(name)
        #expect(read.status == 0, "\(read)")
        #expect(read.stdout == secret)
        #expect(try sb.listed()[name] == nil)
        let json = try sb.vaultctl(["list", "--json"])
        #expect(json.status == 0 && !json.stdoutText.contains(name), "\(json)")
    }
}
