#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A deleted account's uid is given to the next account made, and `userdel -r` leaves `/var/lib/vaultctl/UID`:
/// the gate binds that folder to the account (its name, and an id kept in its home), so the next account with
/// the same uid gets nothing of the old one's: no value, no names, no log (issue 36, point 1). On a machine with
/// the gate installed and a real PAM stack (`GateMachine`), with accounts made and deleted as an administrator
/// would.
@Suite(.serialized, .enabled(if: GateMachine.canRun, "needs root: a mount namespace, users and a set-group-ID file"), .tags(.needsRoot))
final class GateAccountTests {
    static let shared = Result { try GateMachine.start() }
    let m: GateMachine

    init() throws {
        m = try Self.shared.get()
        m.reset()
        m.asRoot("for u in erin frank; do userdel $u 2>/dev/null; rm -rf \(m.folder)/m/home/$u; done; true")
    }

    /// Makes `user` (password `USER-pw`) with a new home, with the uid given, as `useradd` would.
    func makeAccount(_ user: String, uid: String? = nil) {
        let made = m.asRoot("""
            useradd \(uid.map { "-u \($0) " } ?? "")--no-create-home --home-dir \(m.home(user)) --shell /bin/bash \(user) && \
            echo '\(user):\(user)-pw' | chpasswd && mkdir -p \(m.home(user)) && chown \(user):\(user) \(m.home(user)) && chmod 700 \(m.home(user))
            """)
        #expect(made.status == 0, "\(made)")
    }

    /// `userdel -r`: the account and its home go; /var/lib/vaultctl stays, as it does on Debian.
    func deleteAccount(_ user: String) {
        #expect(m.asRoot("userdel \(user) && rm -rf \(m.home(user))").status == 0)
    }

    func read(_ user: String, _ slot: String) -> ProcessResult {
        m.run(user, ["read", slot, "--password-stdin"], stdin: .text("\(user)-pw\n"))
    }

    /// Every file and folder of the store: name, size, modification time (ns), and each file's digest.
    var storeListing: String {
        m.asRoot("find /var/lib/vaultctl -printf '%p %s %T@\\n' | sort; find /var/lib/vaultctl -type f -exec sha256sum {} + | sort").stdoutText
    }

    @Test func theNextAccountWithTheSameUidGetsNothingOfTheDeletedOnes() throws {
        makeAccount("erin")
        #expect(m.run("erin", ["store", "bank"], stdin: .text("erin's secret")).status == 0)
        #expect(read("erin", "bank").stdoutText == "erin's secret")
        let uid = m.uid("erin")
        deleteAccount("erin")
        let before = storeListing

        // Another name, the same uid (Debian's useradd gives the freed uid to the next account).
        makeAccount("frank", uid: uid)
        #expect(m.uid("frank") == uid)
        for args in [["read", "bank", "--password-stdin"], ["list"], ["status", "bank"], ["log"], ["store", "bank"]] {
            let r = m.run("frank", args, stdin: .text("frank-pw\n"))
            #expect(r.status == 77 && r.stdout.isEmpty, "\(args): \(r)")
            #expect(r.stderr.contains("belongs to the account 'erin', not to 'frank'") && r.stderr.contains("sudo rm -r /var/lib/vaultctl/\(uid)"),
                    "\(args): \(r)")
            #expect(!r.stderr.contains("erin's secret"))
        }
        #expect(storeListing == before, "the refused commands changed the store")
        deleteAccount("frank")

        // The same name again, with a new home: the id the old home held is gone with it.
        makeAccount("erin", uid: uid)
        let again = read("erin", "bank")
        #expect(again.status == 77 && again.stdout.isEmpty && again.stderr.contains("holds no vaultctl account id"), "\(again)")
        #expect(again.stderr.contains("If your home is not all there now (not mounted, an encrypted home not unlocked), mount or unlock it and try again: nothing is lost."), "\(again)")
        // A link to the store's own record is not followed (the gate holds the store's group), nor is a link
        // to the folder.
        m.asRoot("mkdir -p \(m.home("erin"))/.local/share && ln -s /var/lib/vaultctl/\(uid) \(m.home("erin"))/.local/share/vaultctl && chown -R erin:erin \(m.home("erin"))/.local")
        let linked = read("erin", "bank")
        #expect(linked.status == 77 && linked.stdout.isEmpty, "\(linked)")
        m.asRoot("rm \(m.home("erin"))/.local/share/vaultctl && mkdir -p \(m.home("erin"))/.local/share/vaultctl && ln -s /var/lib/vaultctl/\(uid)/account \(m.home("erin"))/.local/share/vaultctl/account && chown -R erin:erin \(m.home("erin"))/.local")
        let fileLinked = read("erin", "bank")
        #expect(fileLinked.status == 77 && fileLinked.stdout.isEmpty, "\(fileLinked)")
        #expect(storeListing == before)

        // Root retires the folder as the refusal says; the new account's vault starts empty and works.
        #expect(m.asRoot("rm -r /var/lib/vaultctl/\(uid)").status == 0)
        m.asRoot("rm -rf \(m.home("erin"))/.local")
        let empty = read("erin", "bank")
        #expect(empty.status != 0 && empty.stdout.isEmpty && !empty.stderr.contains("belongs to"), "\(empty)")
        #expect(m.run("erin", ["store", "bank"], stdin: .text("new erin's")).status == 0)
        #expect(read("erin", "bank").stdoutText == "new erin's")
        deleteAccount("erin")
    }

    /// The device key is made for the account too: a record rewritten to name the next account and its id (the
    /// gate's check passed, as by root's mistake or a bug) still opens nothing of the old account's, and nothing
    /// the next account stores lands beside it.
    @Test func theDeviceKeyOpensOnlyForTheAccountItWasMadeFor() throws {
        makeAccount("erin")
        #expect(m.run("erin", ["store", "bank"], stdin: .text("erin's secret")).status == 0)
        let uid = m.uid("erin")
        let key = m.asRoot("stat -c %s /var/lib/vaultctl/\(uid)/device.key; head -c 8 /var/lib/vaultctl/\(uid)/device.key | od -An -tx1").stdoutText
        #expect(key.hasPrefix("72\n") && key.contains("56 43 54 4c 4b 45 59 02"), "a key made for the account: \(key)")
        deleteAccount("erin")
        makeAccount("frank", uid: uid)
        let id = String(repeating: "cd", count: 32)
        let home = "\(m.home("frank"))/.local/share/vaultctl"
        let bound = m.asRoot("""
            install -d -o frank -g frank -m 700 \(m.home("frank"))/.local \(m.home("frank"))/.local/share \(home) && \
            printf 'vaultctl account id 1 %s\\n' \(id) > \(home)/account && chown frank:frank \(home)/account && chmod 600 \(home)/account && \
            printf 'vaultctl-gate account 1\\nuser frank\\nid %s\\n' \(id) > /var/lib/vaultctl/\(uid)/account
            """)
        #expect(bound.status == 0, "\(bound)")
        // The values and the key; the rate limit and the log record frank's authentications, as for anyone's.
        let values = { self.m.asRoot("cd /var/lib/vaultctl/\(uid) && ls -A slots && sha256sum device.key slots/*").stdoutText }
        let before = values()
        let r = read("frank", "bank")
        #expect(r.status == 65 && r.stdout.isEmpty && r.stderr.contains("made for another account"), "\(r)")
        #expect(!r.stderr.contains("erin's secret"))
        let askpass = try m.script("frank-pw", "echo frank-pw")
        for slot in ["bank", "new"] {
            let stored = m.run("frank", ["store", slot], stdin: .text("frank's"), environment: ["VAULT_ASKPASS": askpass])
            #expect(stored.status == 65 && stored.stderr.contains("made for another account"), "\(slot): \(stored)")
        }
        #expect(values() == before, "frank's commands changed the values")
        deleteAccount("frank")
    }

    /// One of root's steps in docs/gate.md ("Accounts"), as written there, for `user`: the ```sh block after the
    /// line that starts with `title`, erin replaced by the user, with `sudo` as root runs it (`-u` by runuser).
    func rootsRecipe(_ title: String, for user: String) throws -> String {
        let doc = try String(contentsOfFile: "\(Paths.repositoryRoot)/docs/gate.md", encoding: .utf8)
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix(title) }, "docs/gate.md has no '\(title)'")
        let open = try #require(lines[start...].firstIndex(of: "```sh"))
        let close = try #require(lines[(open + 1)...].firstIndex(of: "```"))
        let sudo = #"sudo() { if [ "$1" = -u ]; then u=$2; shift 2; runuser -u "$u" -- "$@"; else "$@"; fi; }"#
        return sudo + "\n" + lines[(open + 1)..<close].joined(separator: "\n").replacingOccurrences(of: "erin", with: user)
    }

    /// Root's steps work as written, and write in the home only as its user: a link the user put where the id
    /// goes leads them nowhere the user could not write (the attack on the first recipes made /etc/shadow the
    /// user's), and no folder of the home becomes root's.
    @Test func rootsRecipesWorkAsWrittenAndFollowNoLinkOfTheUsers() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        let uid = m.uid("alice"), home = m.home("alice")
        let giveBack = try rootsRecipe("Giving a home its id back", for: "alice")
        let victim = "\(m.folder)/root-only", victimFolder = "\(m.folder)/root-folder"
        m.asRoot("printf 'root\\n' > \(victim) && chmod 600 \(victim) && mkdir -p \(victimFolder) && chmod 755 \(victimFolder) && chmod 755 \(m.folder)")
        let victims = { self.m.asRoot("stat -c '%U:%G %a %s' \(victim) \(victimFolder); cat \(victim)").stdoutText }
        let untouched = victims()

        // The home lost its id, and alice put links where it goes: to a root file, then the folder to a root folder.
        m.asRoot("rm -r \(home)/.local/share/vaultctl")
        _ = m.run("alice", ["-c", "mkdir -p ~/.local/share/vaultctl && ln -s \(victim) ~/.local/share/vaultctl/account"], program: "/bin/sh")
        let linked = m.asRoot(giveBack)
        #expect(linked.status != 0, "the write through alice's link should fail: \(linked)")
        _ = m.run("alice", ["-c", "rm -r ~/.local/share/vaultctl && ln -s \(victimFolder) ~/.local/share/vaultctl"], program: "/bin/sh")
        _ = m.asRoot(giveBack)
        #expect(victims() == untouched, "root's files changed: \(victims())")

        // Without the links, as root would meet it after a restore: .local gone altogether.
        m.asRoot("rm -rf \(home)/.local")
        let back = m.asRoot(giveBack)
        #expect(back.status == 0, "\(back)")
        #expect(read("alice", "mail").stdoutText == "s3cret")
        let owners = m.asRoot("stat -c '%U %n' \(home)/.local \(home)/.local/share \(home)/.local/share/vaultctl \(home)/.local/share/vaultctl/account").stdoutText
        #expect(!owners.contains("root"), "\(owners)")
        #expect(m.run("alice", ["-c", "mkdir -p ~/.local/state/x && echo ok"], program: "/bin/sh").stdoutText == "ok\n")

        // A record removed by root: the binding recipe binds it again with the id the home holds.
        let bind = try rootsRecipe("Binding a folder without a record", for: "alice")
        let record = m.asRoot("cat /var/lib/vaultctl/\(uid)/account").stdoutText
        m.asRoot("rm /var/lib/vaultctl/\(uid)/account")
        // Giving the id back from a record that is not there fails, saying so, and leaves the home's id whole
        // (its first version emptied it: the only copy of the id, and so every value, lost).
        let idFile = { self.m.asRoot("cat \(home)/.local/share/vaultctl/account").stdoutText }
        let homeID = idFile()
        let nothing = m.asRoot(giveBack)
        #expect(nothing.status != 0 && nothing.stderr.contains("names no id: nothing to give back"), "\(nothing)")
        #expect(idFile() == homeID && homeID.hasPrefix("vaultctl account id 1 "), "\(idFile())")
        let bound = m.asRoot(bind)
        #expect(bound.status == 0, "\(bound)")
        #expect(m.asRoot("cat /var/lib/vaultctl/\(uid)/account").stdoutText == record)
        #expect(read("alice", "mail").stdoutText == "s3cret")
    }

    /// On a machine upgraded from a gate that did not bind folders, a folder left by an account deleted before
    /// the upgrade has no record: an account made after the folder (its home is younger) does not get it.
    @Test func aFolderFromBeforeTheBindingIsNotGivenToAYoungerAccount() throws {
        makeAccount("erin")
        #expect(m.run("erin", ["store", "bank"], stdin: .text("erin's secret")).status == 0)
        let uid = m.uid("erin")
        m.asRoot("rm /var/lib/vaultctl/\(uid)/account")  // as a gate from before left it
        deleteAccount("erin")
        makeAccount("frank", uid: uid)
        let before = storeListing
        let r = read("frank", "bank")
        #expect(r.status == 77 && r.stdout.isEmpty && r.stderr.contains("was made before your home"), "\(r)")
        #expect(storeListing == before)
        deleteAccount("frank")
    }

    /// Each way a home can fail to show the id gets its own words: another id (77), a home that cannot be read
    /// now (69: not mounted, not yours; nothing to retire), and a renamed account is told root can bind it.
    @Test func eachWayTheHomeFailsIsSaidAsItIs() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        let file = "\(m.home("alice"))/.local/share/vaultctl/account"
        let saved = m.asRoot("cat \(file)").stdoutText
        m.asRoot("printf 'vaultctl account id 1 %s\\n' \(String(repeating: "ab", count: 32)) > \(file)")
        let other = read("alice", "mail")
        #expect(other.status == 77 && other.stderr.contains("holds another account id"), "\(other)")
        m.asRoot("printf '%s' '\(saved)' > \(file) && chmod 000 \(m.home("alice"))/.local")
        let closed = read("alice", "mail")
        #expect(closed.status == 69 && closed.stderr.contains("is your home mounted"), "\(closed)")
        m.asRoot("chmod 700 \(m.home("alice"))/.local")
        #expect(read("alice", "mail").stdoutText == "s3cret")
    }

    /// A renamed account is refused by name, told that root can bind it, and root's line from docs/gate.md does.
    @Test func aRenamedAccountIsToldRootCanBindItToTheNewName() throws {
        makeAccount("erin")
        #expect(m.run("erin", ["store", "bank"], stdin: .text("erin's secret")).status == 0)
        let uid = m.uid("erin")
        let renamed = m.asRoot("usermod -l frank erin && groupmod -n frank erin")
        #expect(renamed.status == 0, "\(renamed)")
        let refused = m.run("frank", ["read", "bank", "--password-stdin"], stdin: .text("erin-pw\n"), environment: ["HOME": m.home("erin")])
        #expect(refused.status == 77 && refused.stderr.contains("if you were renamed from 'erin'"), "\(refused)")
        m.asRoot("sed -i 's/^user erin$/user frank/' /var/lib/vaultctl/\(uid)/account")
        let bound = m.run("frank", ["read", "bank", "--password-stdin"], stdin: .text("erin-pw\n"), environment: ["HOME": m.home("erin")])
        #expect(bound.stdoutText == "erin's secret", "\(bound)")
        m.asRoot("userdel frank; rm -rf \(m.home("erin"))")
    }

    /// A folder's record is the first thing in it: a record that cannot be written (here the caller's
    /// RLIMIT_FSIZE, between the home id's size and the record's) takes the folder away again, and no later
    /// request of the same exchange stores into a folder without one (the attack on the first version of this
    /// stored two secrets in an unbound folder, which the next account with the uid then took).
    @Test func noSecretLiesInAFolderWithoutItsRecord() throws {
        let value = "secretA"
        let request = "1 store a"
        let frames = String(repeating: "request \(request.utf8.count)\n\(request)secret \(value.utf8.count)\n\(value)", count: 3)
        let r = m.run("alice", ["--fsize=100", "--", m.gate], program: "/usr/bin/prlimit", stdin: .text(frames))
        #expect(!r.stdoutText.contains("ok 0"), "\(r)")
        #expect(m.asRoot("ls -A /var/lib/vaultctl").stdoutText.isEmpty, "a folder was left: \(m.asRoot("ls -laR /var/lib/vaultctl").stdoutText)")
        // Without the limit, the same requests bind the folder first and store.
        let ok = m.run("alice", [m.gate], program: "/usr/bin/env", stdin: .text(frames))
        #expect(ok.stdoutText.contains("ok 0"), "\(ok)")
        #expect(m.asRoot("cat /var/lib/vaultctl/\(m.uid("alice"))/account").stdoutText.contains("user alice"))
    }

    /// Eight first stores at once agree on one id: the home's is created exclusively, so the record each writes
    /// holds the one the first wrote (two ids, one in the record and one in the home, locked the account out).
    @Test func firstStoresAtOnceAgreeOnTheAccountsId() async throws {
        let m = self.m
        let runs = await withTaskGroup(of: ProcessResult.self) { group in
            for i in 0..<8 { group.addTask { m.run("alice", ["store", "s\(i)"], stdin: .text("v\(i)")) } }
            var all: [ProcessResult] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.filter { $0.status != 0 })")
        let list = m.run("alice", ["list"])
        #expect(list.status == 0 && list.stdoutText.split(separator: "\n").count == 8, "\(list)")
    }

    @Test func theAccountKeepsItsVaultAndItsIdInItsHome() throws {
        #expect(m.run("alice", ["store", "mail"], stdin: .text("s3cret")).status == 0)
        let uid = m.uid("alice")
        let record = m.asRoot("cat /var/lib/vaultctl/\(uid)/account").stdoutText
        let home = m.asRoot("stat -c '%U %a' \(m.home("alice"))/.local/share/vaultctl/account; cat \(m.home("alice"))/.local/share/vaultctl/account").stdoutText
        let id = record.split(separator: "\n").first { $0.hasPrefix("id ") }.map { String($0.dropFirst(3)) } ?? "none"
        #expect(record.hasPrefix("vaultctl-gate account 1\nuser alice\nid ") && id.count == 64, "\(record)")
        #expect(home == "alice 600\nvaultctl account id 1 \(id)\n", "\(home)")
        #expect(read("alice", "mail").stdoutText == "s3cret")

        // A folder made by a gate from before the binding (no record) is bound to the account that runs it
        // next, with the id its home holds.
        m.asRoot("rm /var/lib/vaultctl/\(uid)/account")
        #expect(read("alice", "mail").stdoutText == "s3cret")
        #expect(m.asRoot("cat /var/lib/vaultctl/\(uid)/account").stdoutText == record)

        // Its home restored without the id: refused, and root binds it again by giving the home the id back.
        m.asRoot("rm -r \(m.home("alice"))/.local/share/vaultctl")
        let lost = read("alice", "mail")
        #expect(lost.status == 77 && lost.stderr.contains("root can give your home its id back"), "\(lost)")
        let idFile = "\(m.home("alice"))/.local/share/vaultctl/account"
        m.asRoot("install -d -o alice -g alice -m 700 \(m.home("alice"))/.local/share/vaultctl && sed -n 's/^id /vaultctl account id 1 /p' /var/lib/vaultctl/\(uid)/account > \(idFile) && chown alice:alice \(idFile) && chmod 600 \(idFile)")
        #expect(read("alice", "mail").stdoutText == "s3cret")
        // A record that is not one is an error, never a vault given away.
        m.asRoot("printf 'user alice\\n' > /var/lib/vaultctl/\(uid)/account && chown alice /var/lib/vaultctl/\(uid)/account && chmod 600 /var/lib/vaultctl/\(uid)/account")
        let tampered = read("alice", "mail")
        #expect(tampered.status == 65 && tampered.stdout.isEmpty, "\(tampered)")
    }
}
