import Testing
import TestSupport

/// What a provider keeps of what vaultctl deletes or replaces (issue 36, point 2), against real KeePassXC and
/// gnome-keyring. KeePassXC's defaults keep a deleted item in its Recycle Bin and a replaced value in the
/// item's History, which the Secret Service API does not reach: vaultctl says so after the command, in one
/// line naming the database and the two settings; with both turned off (what that line recommends) an
/// export of the database holds no value vaultctl deleted. gnome-keyring keeps nothing and gets no line.
@Suite("What a provider keeps", .tags(.needsServices))
struct ProviderKeptCopiesTests {
    static let recycled = "KeePassXC may have moved the deleted item, value included, to its Recycle Bin (database 'vaultctl test')"
    static let historyKept = "KeePassXC may have kept the old value in the item's History (database 'vaultctl test')"
    static let howToTurnItOff = "Database → Database Settings… → General set \"Max. history items\" to 0 and untick \"Use recycle bin\""

    /// A value no other test stores, to look for in the export.
    private func value(_ what: String) -> String {
        "kept-copies-\(what)-\(UInt64.random(in: 0...UInt64.max))"
    }

    private func warnings(_ result: ProcessResult) -> [Substring] {
        result.stderr.split(separator: "\n").filter { $0.contains("KeePassXC may have") }
    }

    /// KeePassXC's defaults: a store over a value keeps the old one in the item's History and a delete moves
    /// the item to the Recycle Bin (the export shows both); vaultctl says each in one line, and how to turn
    /// it off. A first store and a read change nothing there and say nothing.
    @Test func withKeePassXCsDefaultsTheWarningSaysWhatItMayKeep() throws {
        let provider = try SecretServiceInstance.start(.keepassxc)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let name = sb.uniqueSlot("kept")
        let (first, second) = (value("first"), value("second"))

        let stored = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text(first))
        #expect(stored.status == 0 && warnings(stored).isEmpty, "a new item replaces nothing: \(stored)")
        _ = provider.keepassxcExport { $0.contains(first) }
        let over = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text(second))
        #expect(over.status == 0, "\(over)")
        #expect(warnings(over).count == 1, "one line: \(over.stderr)")
        #expect(over.stderr.contains(Self.historyKept) && over.stderr.contains(Self.howToTurnItOff), "\(over.stderr)")
        #expect(!over.stderr.contains("Recycle Bin,"), "nothing was deleted: \(over.stderr)")
        let afterOver = provider.keepassxcExport { $0.contains(second) && $0.contains(first) }
        #expect(afterOver.contains(first), "KeePassXC kept the replaced value in the item's History, as the line says")
        let read = try sb.read(name)
        #expect(read.status == 0 && read.stdoutText == second && warnings(read).isEmpty, "\(read)")

        let delete = try sb.vaultctl(["delete", name])
        #expect(delete.status == 0, "\(delete)")
        #expect(warnings(delete).count == 1, "one line: \(delete.stderr)")
        #expect(delete.stderr.contains(Self.recycled) && delete.stderr.contains(Self.howToTurnItOff), "\(delete.stderr)")
        #expect(try sb.vaultctl(["status", name]).stdoutText.hasPrefix("none:"), "the Secret Service shows no item")
        func recycleBin(_ export: String) -> String {
            export.components(separatedBy: "<Name>Recycle Bin</Name>").dropFirst().joined()
        }
        let bin = recycleBin(provider.keepassxcExport { recycleBin($0).contains(second) && recycleBin($0).contains(first) })
        #expect(bin.contains(second) && bin.contains(first), "the item, value and History, is in the Recycle Bin")

        // A move out of the sync slot deletes the item there: the same line.
        let moved = sb.uniqueSlot("kept-move")
        let third = value("moved")
        try sb.store(moved, Array(third.utf8), mode: "sync")
        let move = try sb.vaultctl(["move", moved, "--to", "device"])
        #expect(move.status == 0 && warnings(move).count == 1 && move.stderr.contains(Self.recycled), "\(move)")
        #expect(try sb.read(moved).stdoutText == third)
        // A store into the device slot that removes the sync copy: the same.
        let storedAside = sb.uniqueSlot("kept-aside")
        try sb.store(storedAside, Array(value("aside").utf8), mode: "sync")
        let aside = try sb.vaultctl(["store", storedAside, "--mode", "device"], stdin: .text(value("device")))
        #expect(aside.status == 0 && warnings(aside).count == 1 && aside.stderr.contains(Self.recycled), "\(aside)")
    }

    /// With what the line recommends (no Recycle Bin, no History), nothing of a value vaultctl replaced,
    /// moved out or deleted is left in the database: the export holds none of them (only the deleted entries'
    /// ids, as KeePass's DeletedObjects). vaultctl cannot read those settings, so it still says the line.
    @Test func withTheRecommendedSettingsTheExportHoldsNoDeletedValue() throws {
        let provider = try SecretServiceInstance.start(.keepassxcNoCopies)
        defer { provider.stop() }
        let sb = try Sandbox(provider)
        let name = sb.uniqueSlot("gone")
        let moved = sb.uniqueSlot("gone-move")
        let values = [value("first"), value("second"), value("moved")]

        try sb.store(name, Array(values[0].utf8), mode: "sync")
        _ = provider.keepassxcExport { $0.contains(values[0]) }
        let over = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text(values[1]))
        #expect(over.status == 0 && over.stderr.contains(Self.historyKept), "it cannot tell the settings: \(over)")
        _ = provider.keepassxcExport { $0.contains(values[1]) }
        try sb.store(moved, Array(values[2].utf8), mode: "sync")
        _ = provider.keepassxcExport { $0.contains(values[2]) }
        let move = try sb.vaultctl(["move", moved, "--to", "device"])
        #expect(move.status == 0 && move.stderr.contains(Self.recycled), "\(move)")
        // Once the move's delete is saved, so is everything before it.
        let beforeDelete = provider.keepassxcExport { $0.contains(values[1]) && !$0.contains("vaultctl: \(moved)") }
        // An export that failed or was empty contains no value at all: that is no evidence of a missing History.
        #expect(beforeDelete.contains("<Name>vaultctl test</Name>") && beforeDelete.contains(values[1]),
                "the export was read: \(beforeDelete.prefix(300))")
        #expect(!beforeDelete.isEmpty && !beforeDelete.contains(values[0]), "no History of the replaced value")

        let delete = try sb.vaultctl(["delete", name])
        #expect(delete.status == 0 && delete.stderr.contains(Self.recycled), "\(delete)")
        let export = provider.keepassxcExport { !$0.contains("vaultctl: \(name)") }
        #expect(export.contains("<Name>vaultctl test</Name>"), "the export was read: \(export.prefix(300))")
        for v in values { #expect(!export.contains(v), "no vaultctl value is left in the database") }
        #expect(!export.contains("vaultctl: \(name)") && !export.contains("vaultctl: \(moved)"), "no item either")
        #expect(!export.contains("Recycle Bin"))
        #expect(try sb.read(moved).stdoutText == values[2], "the moved value is in the device slot")
    }

    /// gnome-keyring removes what is deleted and replaced for good: no line after a store over a value, a
    /// move out of the sync slot or a delete.
    @Test func gnomeKeyringGetsNoSuchLine() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gk-kept")
        try sb.store(name, Array(value("first").utf8), mode: "sync")
        let over = try sb.vaultctl(["store", name, "--mode", "sync"], stdin: .text(value("second")))
        let move = try sb.vaultctl(["move", name, "--to", "device"])
        let back = try sb.vaultctl(["move", name, "--to", "sync"])
        let delete = try sb.vaultctl(["delete", name])
        for result in [over, move, back, delete] {
            #expect(result.status == 0, "\(result)")
            #expect(!result.stderr.contains("KeePassXC") && !result.stderr.contains("Recycle Bin"), "\(result.stderr)")
        }
    }
}
