#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A sync read finds its item and opens the encrypted session before the password prompt, and after it asks
/// the provider only for that item's secret and attributes (`GetSecret`, and `Attributes` to see it is still
/// this slot's item), in one round trip: a gated read costs one search. What the person
/// authenticated for can change while they type: the item deleted, stored over, replaced by a new item, the
/// value moved to the device slot, the collection locked. The read then answers what is there after the
/// prompt, as a read that searched again would; never the old value of an item that is gone, and never a
/// value without a prompt.
///
/// The askpass program makes the change (then answers the password), so it lands exactly between the look
/// before the prompt and the read after it.
@Suite("sync reads across the prompt", .tags(.needsServices))
struct ReadAcrossThePromptTests {
    /// On a private gnome-keyring with `dbus-monitor` watching: before the prompt, the search and the key
    /// exchange; after it, vaultctl asks the provider for the item's `Attributes` and `GetSecret`, nothing more. The askpass program marks the
    /// moment of the prompt with a call of its own (`GetId`), which the monitor records in order.
    @Test func afterThePromptTheReadAsksOnlyForTheSecret() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("onecall")
            let value = Array("one-call-\(UInt32.random(in: 0...UInt32.max))".utf8)
            try sb.store(name, value, mode: "sync")

            let monitor = try BusMonitor(keyring, writingTo: "\(sb.root)/bus.log", format: "--profile")

            let askpass = "\(sb.root)/askpass-marking"
            try sb.writeScript(askpass, """
                \(outsidePAM) '\(Paths.tool("gdbus"))' call --session --dest org.freedesktop.DBus \
                  --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.GetId >/dev/null 2>&1 </dev/null
                printf '%s\\n' '\(Fixtures.pamPassword)'

                """)
            let read = try Sandbox.repeatingPAMWrapperRaces {
                try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": askpass])
            }
            #expect(read.status == 0 && read.stdout == value, "\(read)")
            try monitor.catchUpAndStop(after: "ListNames")

            // Method calls, in the order the bus saw them: (sender, member), for the provider and the mark.
            let calls: [(sender: String, member: String)] = String(decoding: monitor.bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
                let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard f.count >= 8, f[0] == "mc", f[4] == "org.freedesktop.secrets" || f[7] == "GetId" else { return nil }
                return (f[3], f[7])
            }
            let mark = try #require(calls.firstIndex { $0.member == "GetId" }, "the askpass program's mark is not on the bus: \(calls)")
            let reader = try #require(calls[..<mark].last { $0.member == "SearchItems" }?.sender, "no search before the prompt: \(calls)")
            let before = calls[..<mark].filter { $0.sender == reader }.map(\.member)
            let after = calls[(mark + 1)...].filter { $0.sender == reader }.map(\.member)
            #expect(before.contains("SearchItems") && before.contains("OpenSession"), "before the prompt: \(before)")
            #expect(!before.contains("GetSecret"), "the secret was asked for before the prompt: \(before)")
            // One trip: the secret, and the item's attributes beside it (still this slot's item?); no new search.
            #expect(after == ["Get", "GetSecret"], "after the prompt the read asked the provider for \(after), not its item's attributes and secret alone")
        }
    }

    /// The first call of vaultctl's connection is a `Peer.Ping`, and nothing else goes to the provider before
    /// its answer: gnome-keyring 42.1 dies when an `OpenSession` or `Properties.Get` of a new client reaches it
    /// before it registered the client (docs/gnome-keyring-crash/).
    @Test func theConnectionsFirstCallIsAPingAnsweredBeforeAnythingElse() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("ping-first")
            try sb.store(name, Array("v".utf8), mode: "sync")
            let monitor = try BusMonitor(keyring, writingTo: "\(sb.root)/bus.log", format: "--profile")
            let read = try sb.read(name)
            #expect(read.status == 0, "\(read)")
            try monitor.catchUpAndStop(after: "ListNames")

            let lines = String(decoding: monitor.bytes, as: UTF8.self).split(separator: "\n")
                .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            let reader = try #require(lines.first { $0.count >= 8 && $0[0] == "mc" && $0[7] == "OpenSession" }?[3], "no OpenSession seen")
            let toProvider = lines.enumerated().filter { $0.element.count >= 8 && $0.element[0] == "mc" && $0.element[3] == reader
                && $0.element[4] == "org.freedesktop.secrets" }
            let first = try #require(toProvider.first, "no call from the reader")
            #expect(first.element[6] == "org.freedesktop.DBus.Peer" && first.element[7] == "Ping", "first call: \(first.element)")
            let answered = try #require(lines.firstIndex { $0.count >= 6 && $0[0] == "mr" && $0[4] == reader && $0[5] == first.element[2] },
                                        "the Ping's answer is not on the bus")
            #expect(toProvider.dropFirst().allSatisfy { $0.offset > answered }, "a call went out before the Ping's answer came back")
        }
    }

    /// Deleted by another program while the person typed: the read says the slot is empty (66) and prints
    /// nothing.
    @Test func anItemDeletedDuringThePromptIsNotRead() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("gone")
        try sb.store(name, Array("soon-gone".utf8), mode: "sync")
        let r = try readChanging(sb, name, during: "\(outsidePAM) '\(Paths.tool("secret-tool"))' clear xdg:schema org.vaultctl.Slot slot '\(name)'")
        #expect(r.status == 66, "\(r)")
        #expect(r.stdout.isEmpty, "the deleted value was printed: \(r)")
        #expect(r.stderr.contains(name), "\(r.stderr)")
    }

    /// Stored over in place (secret-tool replaces the item with the same attributes): the new value.
    @Test func anItemStoredOverDuringThePromptReadsTheNewValue() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("over")
        try sb.store(name, Array("old-value".utf8), mode: "sync")
        let r = try readChanging(sb, name, during: secretToolStore(name, "new-value"))
        #expect(r.status == 0 && r.stdout == Array("new-value".utf8), "\(r)")
    }

    /// Deleted and stored again (a new item, at a new path): the new item's value.
    @Test func anItemReplacedByANewOneDuringThePromptReadsTheNewOne() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("renewed")
        try sb.store(name, Array("first-item".utf8), mode: "sync")
        let r = try readChanging(sb, name, during: """
            \(outsidePAM) '\(Paths.tool("secret-tool"))' clear xdg:schema org.vaultctl.Slot slot '\(name)'
            \(secretToolStore(name, "second-item"))
            """)
        #expect(r.status == 0 && r.stdout == Array("second-item".utf8), "\(r)")
    }

    /// Moved to the device slot (a store that removes the sync copy): the read finds it there.
    @Test func aValueMovedToTheDeviceSlotDuringThePromptIsReadThere() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("moved")
        try sb.store(name, Array("synced-value".utf8), mode: "sync")
        // The store inside the askpass program replaces a value, so it would ask PAM itself: not here.
        try sb.writePolicy(#"{"version":1,"gate":{"storeOver":false}}"#)
        let r = try readChanging(sb, name, during: "printf 'device-value' | \(outsidePAM) '\(Paths.vaultctl)' store '\(name)' --mode device")
        #expect(r.status == 0 && r.stdout == Array("device-value".utf8), "\(r)")
        #expect(sb.secretToolLookup(name).stdout.isEmpty, "the store did not remove the sync copy")
    }

    /// Another program gives the item found before the prompt another slot's attributes (any client may set
    /// an item's `Attributes`): the read does not answer with what is now another slot's value. It looks
    /// again, finds no item for its slot, and says the slot is empty.
    @Test func anItemGivenToAnotherSlotDuringThePromptIsNotRead() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("relabelled")
        let other = sb.uniqueSlot("other")
        try sb.store(name, Array("now-another-slots".utf8), mode: "sync")
        let search = ProcessRunner.run(Paths.tool("gdbus"), ["call", "--session", "--dest", "org.freedesktop.secrets",
                                                             "--object-path", "/org/freedesktop/secrets",
                                                             "--method", "org.freedesktop.Secret.Service.SearchItems",
                                                             "{'xdg:schema': 'org.vaultctl.Slot', 'slot': '\(name)'}"],
                                       environment: sb.secretToolEnvironment, timeout: .seconds(10))
        let path = try #require(search.stdoutText.split(separator: "'").first { $0.hasPrefix("/org/freedesktop/secrets/collection/") },
                                "no item found for \(name): \(search)")
        let r = try readChanging(sb, name, during: """
            \(outsidePAM) '\(Paths.tool("gdbus"))' call --session --dest org.freedesktop.secrets --object-path '\(path)' \
              --method org.freedesktop.DBus.Properties.Set org.freedesktop.Secret.Item Attributes \
              "<{'xdg:schema': 'org.vaultctl.Slot', 'slot': '\(other)'}>"
            """)
        #expect(r.status == 66, "\(r)")
        #expect(r.stdout.isEmpty, "the read printed the value that now belongs to slot '\(other)': \(r)")
        #expect(sb.secretToolLookup(other).stdout == Array("now-another-slots".utf8), "the item was not given to the other slot")
    }

    /// The provider started again while the person typed (the keyring daemon restarted on the same bus): the
    /// session opened before the prompt is gone with the old daemon, so the read looks again with a new key
    /// exchange and reads the value the restarted keyring loaded from disk.
    @Test func aProviderRestartedDuringThePromptIsAskedWithANewSession() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("restarted")
            let value = Array("kept-on-disk-\(UInt32.random(in: 0...UInt32.max))".utf8)
            try sb.store(name, value, mode: "sync")
            let k = keyring.folder
            // As scripts/secret-service.sh starts it (the provider's pid is the second line of its pids file; the
            // new one is added, so stopping the instance stops it too).
            let r = try readChanging(sb, name, during: """
                old=$(sed -n 2p '\(k)/pids')
                kill "$old"
                for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
                printf '%s' '\(SecretServiceInstance.keyringPassword)' | \(outsidePAM) HOME='\(k)/home' XDG_DATA_HOME='\(k)/home/.local/share' \
                  XDG_RUNTIME_DIR='\(k)/run' '\(Paths.tool("gnome-keyring-daemon"))' --foreground --unlock --components=secrets \
                  >'\(k)/keyring-again.log' 2>&1 &
                echo $! >> '\(k)/pids'
                # Until the new daemon answers for the default collection: 10 s in all (each call has 1 s).
                end=$(( $(date +%s) + 10 ))
                while [ "$(date +%s)" -lt "$end" ]; do
                  \(outsidePAM) '\(Paths.tool("gdbus"))' call --session --timeout 1 --dest org.freedesktop.secrets \
                    --object-path /org/freedesktop/secrets --method org.freedesktop.Secret.Service.ReadAlias default \
                    | grep -q collection/ && exit 0
                  sleep 0.05
                done
                exit 1
                """)
            #expect(r.status == 0 && r.stdout == value, "\(r)")
        }
    }

    /// The collection locked while the person typed (on a private keyring): the value is not read through
    /// the item found before the prompt. The read searches again, finds the item locked and asks the
    /// provider to unlock it; with no graphical session for its prompt that fails within seconds (69), as it
    /// did before the read kept its first look.
    @Test func aCollectionLockedDuringThePromptIsNotReadThroughTheOldLook() throws {
        try Sandbox.onPrivateKeyring { keyring, sb in
            let name = sb.uniqueSlot("locked")
            let value = Array("locked-later-\(UInt32.random(in: 0...UInt32.max))".utf8)
            try sb.store(name, value, mode: "sync")
            let lock = """
                \(outsidePAM) '\(Paths.tool("gdbus"))' call --session --dest org.freedesktop.secrets \
                  --object-path /org/freedesktop/secrets --method org.freedesktop.Secret.Service.Lock \
                  "['/org/freedesktop/secrets/collection/login']"
                """
            let r = try readChanging(sb, name, during: lock)
            // The words of the search after the prompt, which found the item locked and asked to unlock it.
            #expect(r.status == 69 && r.stderr.contains("prompt to unlock slot"), "a collection locked during the prompt: \(r)")
            #expect(r.stdout.isEmpty, "\(r)")
            #expect(r.elapsed < .seconds(20), "\(r.elapsed)")
            let locked = CollectionProperty.read("Locked", environment: keyring.clientEnvironment, timeout: .seconds(10))
            #expect(locked.stdoutText.contains("true"), "the askpass program did not lock the collection: \(locked)")
        }
    }

    // MARK: - Helpers

    /// The askpass program runs under the test PAM stack (it inherits pam_wrapper); what it runs does not.
    private let outsidePAM = "env -u LD_PRELOAD -u PAM_WRAPPER"

    /// `vaultctl read NAME` whose askpass program runs `change` (shell lines, in a subshell) before it answers the password;
    /// the change must succeed (its exit status is checked), so a failed change cannot pass for a read's answer.
    private func readChanging(_ sb: Sandbox, _ name: String, during change: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let askpass = "\(sb.root)/askpass-changing"
        let status = "\(sb.root)/change-status"
        unlink(status)
        try sb.writeScript(askpass, "(\n\(change)\n) >/dev/null 2>&1 </dev/null\necho $? > '\(status)'\nprintf '%s\\n' '\(Fixtures.pamPassword)'\n")
        let r = try Sandbox.repeatingPAMWrapperRaces {
            try sb.vaultctl(["read", name], overriding: ["VAULT_ASKPASS": askpass], sourceLocation: sourceLocation)
        }
        let changed = FileText.read(status)?.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(changed == "0", "the change the askpass program makes failed (exit \(changed ?? "none")): \(change)",
                     sourceLocation: sourceLocation)
        return r
    }

    /// A shell line that stores `value` for slot `name` with secret-tool (replacing an item with the same
    /// attributes), outside pam_wrapper.
    private func secretToolStore(_ name: String, _ value: String) -> String {
        "printf '\(value)' | \(outsidePAM) '\(Paths.tool("secret-tool"))' store --label='vaultctl: \(name)' xdg:schema org.vaultctl.Slot slot '\(name)'"
    }
}
