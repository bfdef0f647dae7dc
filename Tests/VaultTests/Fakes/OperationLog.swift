import Foundation
import Slots
@testable import Vault

/// One ordered list of what the fakes were asked to do, shared by both fake slots and the fake gate.
///
/// `ModeRecord` is a concrete type writing a real file, so it cannot log itself. Instead the log watches it:
/// before each entry (and when `entries` is read) it compares the record with what it last saw and writes
/// each change as `record <name>=<mode>` first. Because `Vault` only changes the record between calls to its
/// slots, the changes land exactly where they happened in the sequence.
///
/// `@unchecked Sendable`: the fakes that share it must be `Sendable` (`Slot`, `PresenceGate`), and every
/// stored property is read and written only while `lock` is held.
final class OperationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    private var record: ModeRecord?
    private var lastSeen: [SlotName: SlotMode] = [:]

    /// Starts watching `record`, taking what it holds now as the starting point.
    func watch(_ record: ModeRecord) {
        lock.lock()
        defer { lock.unlock() }
        self.record = record
        lastSeen = (try? record.load()) ?? [:]
    }

    /// Forgets every entry and takes the record as it is now as the new starting point (after test set-up).
    func reset() {
        lock.lock()
        defer { lock.unlock() }
        list = []
        if let record { lastSeen = (try? record.load()) ?? [:] }
    }

    /// Appends `entry`, after any record change made since the last entry.
    func note(_ entry: String) {
        lock.lock()
        defer { lock.unlock() }
        noteRecordChanges()
        list.append(entry)
    }

    /// Everything in order, record changes included.
    var entries: [String] {
        lock.lock()
        defer { lock.unlock() }
        noteRecordChanges()
        return list
    }

    /// Only what changed (or tried to change) something: writes, deletes and record changes.
    var changes: [String] {
        entries.filter { $0.hasPrefix("record ") || $0.contains(".write ") || $0.contains(".delete ") }
    }

    private func noteRecordChanges() {
        guard let record, let now = try? record.load() else { return }
        for name in Set(lastSeen.keys).union(now.keys).sorted() where lastSeen[name] != now[name] {
            list.append("record \(name)=\(now[name]?.rawValue ?? "none")")
        }
        lastSeen = now
    }
}
